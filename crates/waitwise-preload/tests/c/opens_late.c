/* A program that imports none of the interposed functions and opens a
 * library that uses them (argv[1], built from late_library.c) with dlopen.
 * Prints whether the interposer's implementation is mapped at the start of
 * main and after the library's waits ("mapped" or "not mapped", one line
 * each). */
#include <dlfcn.h>

#include "check.h"
#include "implementation_mapped.h"

int main(int argc, char **argv) {
    CHECK(argc == 2);
    puts(implementation_mapped() ? "mapped" : "not mapped");
    void *library = dlopen(argv[1], RTLD_NOW);
    if (!library) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 1;
    }
    int (*waits)(void) = (int (*)(void))dlsym(library, "late_library_waits");
    CHECK(waits != NULL);
    CHECK(waits() == 0);
    puts(implementation_mapped() ? "mapped" : "not mapped");
    return 0;
}
