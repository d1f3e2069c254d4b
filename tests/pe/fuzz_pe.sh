#!/bin/sh
# Builds the PE toolkit's libFuzzer harness with clang (ASan + UBSan),
# replays the seed corpus, then fuzzes for SECONDS. Any finding fails.
# Usage: fuzz_pe.sh CLANG SOURCE_DIR WORK_DIR SECONDS
set -eu
clang=$1 src=$2 work=$3 seconds=$4
if [ ! -x "$clang" ]; then
	echo "FAIL: clang not found ($clang); scripts/install-deps.sh installs it"
	exit 1
fi
rm -rf "$work"
mkdir -p "$work/corpus"
"$clang" -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined -Wall -Wextra -Werror -Wno-unused-parameter \
	-I"$src/common/include" -I"$src/common/src/pe" -I"$src/tests/pe" \
	"$src/tests/pe/fuzz_pe.c" "$src"/common/src/pe/*.c "$src/common/src/err.c" "$src/common/src/buf.c" \
	-lcjson -o "$work/fuzz_pe"
cd "$work"
# Replay: every seed once.
./fuzz_pe -runs=0 "$src/tests/pe/corpus"
# Fuzz: new inputs go to the scratch corpus, never into the source tree.
./fuzz_pe -max_total_time="$seconds" -max_len=16384 -timeout=10 -rss_limit_mb=2048 \
	-print_final_stats=1 corpus "$src/tests/pe/corpus"
