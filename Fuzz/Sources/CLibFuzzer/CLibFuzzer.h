/*
 * libFuzzer's driver, which `-sanitize=fuzzer` links in. SwiftPM renames an executable's `main` to
 * `<target>_main`, so each fuzz target defines that and hands over to the driver with its callback.
 */
#ifndef CLIBFUZZER_H
#define CLIBFUZZER_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *_Nonnull argc, char *_Nullable *_Nullable *_Nonnull argv,
                        int (*_Nonnull callback)(const uint8_t *_Nullable data, size_t size));

#endif
