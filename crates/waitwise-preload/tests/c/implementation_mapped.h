/* Whether the interposer's implementation (libwaitwise_interposer.so) is
 * mapped into this process. */
#ifndef WAITWISE_PRELOAD_TEST_IMPLEMENTATION_MAPPED_H
#define WAITWISE_PRELOAD_TEST_IMPLEMENTATION_MAPPED_H

#include <stdio.h>
#include <string.h>

static int implementation_mapped(void) {
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[4096];
    int found = 0;
    if (!maps) {
        perror("/proc/self/maps");
        return -1;
    }
    while (fgets(line, sizeof line, maps))
        if (strstr(line, "libwaitwise_interposer.so"))
            found = 1;
    fclose(maps);
    return found;
}

#endif
