#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# contract.t - the cell contract checked against both drivers from one list (tests/contract.sh):
# the same checks, run with --driver container and --driver vm, as root and rootless. The vm
# half needs qemu-system-x86_64 and a Debian kernel (/boot/vmlinuz-*); without them it is
# skipped, saying which. Each VM boot is seconds under TCG: the list keeps them few.
. "$(dirname "$0")/../lib.sh"
. "$REPO/tests/contract.sh"

T_TIMEOUT=240

plan $((2 * CONTRACT_TESTS))
host_tmp_marker

contract_checks container

if ! command -v qemu-system-x86_64 >/dev/null; then
	skip "$CONTRACT_TESTS" "qemu-system-x86_64 is not installed (qemu-system-x86)"
elif ! ls /boot/vmlinuz-* >/dev/null 2>&1; then
	skip "$CONTRACT_TESTS" "no /boot/vmlinuz-* (linux-image-amd64)"
elif [ ! -x "$(dirname "$WARREN")/warren-guest-init" ]; then
	bail_out "no warren-guest-init beside $WARREN: build it with make"
else
	contract_checks vm
fi
