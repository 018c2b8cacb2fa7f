/* contract.h - the constants of the cell contract, shared by every driver and a future guest
 * side: modes, mount points, environment names, ids. Change a value here and every side
 * follows. See DESIGN.md, "The contract of a cell". */
#ifndef WARREN_CELL_CONTRACT_H
#define WARREN_CELL_CONTRACT_H

#include <sys/stat.h>

/* The cell's /tmp: world-writable and sticky, like GitHub's runners. */
#define CELL_TMP_PATH      "/tmp"
#define CELL_VARTMP_PATH   "/var/tmp"
#define CELL_TMP_MODE      01777
#define CELL_TMP_IFMODE    (S_IFDIR | CELL_TMP_MODE)
/* $TMPDIR is set to this, last, after every other variable. */
#define CELL_TMPDIR_ENV    "TMPDIR"
#define CELL_TMPDIR_VALUE  CELL_TMP_PATH

/* --externals DIR: the read-only tool caches, always at this path in the cell (a microVM gets
 * them as a read-only drive mounted here), named by this variable in the job's environment. */
#define CELL_EXTERNALS_PATH "/opt/warren/externals"
#define CELL_EXTERNALS_ENV  "WARREN_EXTERNALS"

/* The run user when warren is started by root. */
#define CELL_DEFAULT_UID   1000
#define CELL_DEFAULT_GID   1000
#define CELL_DEFAULT_USER  "warren"
#define CELL_HOME_PARENT   "/home"
#define CELL_HOME_MODE     0700
#define CELL_SHELL_PATH    "/bin/sh"
#define CELL_PATH_ENV      "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"

/* When root starts warren, cell ids 0..65535 are host ids BASE..BASE+65535: nothing in a
 * cell is a host user, and cell uid 1000 is host uid 1000001000 (easy to read in ls -ln). */
#define CELL_ROOT_ID_BASE  1000000000u
#define CELL_ID_RANGE      65536u

/* Names of the run directory's parts (see run/rundir.h). */
#define RUN_TMP_DIR        "tmp"
#define RUN_VARTMP_DIR     "var-tmp"
#define RUN_SHM_DIR        "shm"      /* the cell's /dev/shm: scratch like /tmp */
#define RUN_HOME_DIR       "home"
#define RUN_UPPER_DIR      "upper"
#define RUN_WORK_DIR       "work"
#define RUN_ROOT_DIR       "root"
#define RUN_LOWER_DIR      "lower"
#define RUN_ETC_DIR        "etc"

#endif
