/* SPDX-License-Identifier: Apache-2.0 */
/* vmexec.h - a job's executor (cell/executor.h) across the VM's wall. The runner speaks to the
 * executor over a SOCK_SEQPACKET socket and gives each task its output pipe as a descriptor,
 * which no virtio-serial port carries. So two relays speak frames over the port VM_PORT_EXEC:
 * on the host (vmexec_host_relay) one keeps the runner's socket and the tasks' pipes; in the
 * guest (vmexec_guest_relay) one keeps the executor's socket and makes each task's pipe. The
 * executor and the runner are the container driver's, unchanged. Both relays use nothing but
 * the C library and util/error.c: the static guest init links them too. */
#ifndef WARREN_CELL_VMEXEC_H
#define WARREN_CELL_VMEXEC_H

#include <stdint.h>

/* A frame: this header, then len bytes. */
struct vmx_frame {
	uint32_t len;
	uint32_t kind;    /* enum vmx_kind */
	uint32_t task;    /* VMX_OUT, VMX_EOF: the task whose output it is */
};

enum vmx_kind {
	VMX_MSG = 1,  /* an executor message (struct exec_hdr and its strings), either way */
	VMX_OUT,      /* guest -> host: output of a task */
	VMX_EOF,      /* guest -> host: a task's output ended */
	VMX_SHUT,     /* host -> guest: the runner is done (the executor ends) */
};

/* The host's side: the runner's socket and the port's socket (qemu's chardev), until the
 * port ends (qemu is gone). */
void vmexec_host_relay(int runner, int port);
/* The guest's side: the port and the executor's socket, until the executor ends (every task's
 * output that is there then is passed on first). */
void vmexec_guest_relay(int port, int executor);

#endif
