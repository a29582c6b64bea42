/* Prints what early_library.c's constructor saw ("mapped" or "not
 * mapped"). */
#include <stdio.h>

int early_library_mapped(void);

int main(void) {
    puts(early_library_mapped() == 1 ? "mapped" : "not mapped");
    return 0;
}
