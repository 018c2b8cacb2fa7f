/* SPDX-License-Identifier: Apache-2.0 */
/* id.h - run ids: "run_" + a ULID (26 chars Crockford base32, sortable by start time). */
#ifndef WARREN_RUN_ID_H
#define WARREN_RUN_ID_H

#include <stdint.h>
#include <stdbool.h>

#include "cell/contract.h"   /* RUN_ID_PREFIX, RUN_ID_LEN */

/* Encode a ULID from a millisecond timestamp and 10 random bytes into out (RUN_ID_LEN + 1 bytes). */
void run_id_format(char *out, uint64_t ms, const uint8_t rnd[10]);
/* A fresh id from the clock and getrandom(). */
int run_id_new(char *out);
/* True when s is a well-formed run id. */
bool run_id_valid(const char *s);
/* The millisecond timestamp a valid id encodes; 0 for a string that is not a valid id. */
uint64_t run_id_time_ms(const char *id);

#endif
