/* SPDX-License-Identifier: Apache-2.0 */
/* sysctl.h - the sysctls a cell may be given: an OCI bundle's linux.sysctl (a pod's
 * securityContext.sysctls, containerd's own). Only the kubelet's safe set, each the
 * namespace's own (the network's, the IPC one's), so a cell's setting is never the host's:
 * refused where the namespace is the host's (hostNetwork, hostIPC). Set by init in the cell's
 * namespaces, or the pod's it joined, before the job starts. */
#ifndef WARREN_CELL_SYSCTL_H
#define WARREN_CELL_SYSCTL_H

#include "cell/spec.h"
#include "util/error.h"

/* The namespace kind whose sysctl key is (GATE_NS_NET or GATE_NS_IPC), or -1 when key is not
 * one of the safe set. key with '.' (or '/') between its parts. */
int cell_sysctl_kind(const char *key);
/* Add key = value (named field in errors, e.g. "linux.sysctl") to s's sysctls, once its
 * namespaces are decided: refused (one line) when key is not safe, its namespace is the
 * host's, or value is not a plain one-line value. */
int cell_sysctl_add(struct cell_spec *s, const char *field, const char *key, const char *value, struct error *err);
/* Set s's sysctls, from a process in the cell's final network and IPC namespaces (the kernel
 * resolves /proc/sys/net and /proc/sys/kernel/shm* by the caller's): 0, or -1 with err. */
int cell_sysctls_set(const struct cell_spec *s, struct error *err);

#endif
