/* SPDX-License-Identifier: Apache-2.0 */
/* oci.h - the OCI runtime face: `warren oci ...`, and warren called as warren-runc. */
#ifndef WARREN_OCI_OCI_H
#define WARREN_OCI_OCI_H

/* argv[0] is the subcommand's name ("oci") or the program's (warren-runc): runc's command
 * line follows. Returns the exit status. */
int cmd_oci(int argc, char **argv);

#endif
