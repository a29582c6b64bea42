/* libwaitwise_preload.so, the object a program preloads: the pthread
 * functions' entry points, and the decision whether this process waits with
 * waitwise at all.
 *
 * Each interposed function here is a jump through a slot. At load (or at the
 * first call, if another object's constructor calls one before this one's
 * runs) the process decides, once:
 *
 * - waitwise, when an object loaded at start-up (the program, a library)
 *   imports any of the functions, or WAITWISE_STATS or WAITWISE_PROFILE asks
 *   for output: the implementation, libwaitwise_interposer.so beside this
 *   object, is loaded and every slot points into it;
 * - otherwise the C library: a program that imports none of them (/bin/true,
 *   most command-line tools) never loads, reads or measures anything, and a
 *   call that reaches a slot later (from an object it opens with dlopen) is
 *   bound to the C library's function at that first call.
 *
 * The decision is never changed: an object is always handled by the same
 * implementation. One exception, while the implementation itself is being
 * loaded: a call made by that loading (a custom allocator's lock, taken by
 * the allocations dlopen makes) runs the C library's function. Only mutexes
 * are known to be used there (by allocators), and waitwise's mutex keeps
 * glibc's words and values, so such a mutex stays valid afterwards.
 *
 * The slots are filled before the decision is published (release/acquire on
 * `state`); a slot read on the call path needs no ordering beyond that of
 * the decision, because each slot is written once before publication
 * (waitwise) or only ever holds the one C library address (C library).
 *
 * x86-64 Linux with glibc only, like the implementation. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <limits.h>
#include <link.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The interposed functions, sorted by name (strcmp order), each with the
 * glibc symbol version to forward to when it is not the default one ("":
 * the default). */
#define INTERPOSED(X) \
    X(0, __pthread_mutex_destroy, "") \
    X(1, __pthread_mutex_init, "") \
    X(2, __pthread_mutex_lock, "") \
    X(3, __pthread_mutex_trylock, "") \
    X(4, __pthread_mutex_unlock, "") \
    X(5, __pthread_rwlock_destroy, "") \
    X(6, __pthread_rwlock_init, "") \
    X(7, __pthread_rwlock_rdlock, "") \
    X(8, __pthread_rwlock_tryrdlock, "") \
    X(9, __pthread_rwlock_trywrlock, "") \
    X(10, __pthread_rwlock_unlock, "") \
    X(11, __pthread_rwlock_wrlock, "") \
    X(12, cnd_broadcast, "") \
    X(13, cnd_destroy, "") \
    X(14, cnd_init, "") \
    X(15, cnd_signal, "") \
    X(16, cnd_timedwait, "") \
    X(17, cnd_wait, "") \
    X(18, mtx_destroy, "") \
    X(19, mtx_init, "") \
    X(20, mtx_lock, "") \
    X(21, mtx_timedlock, "") \
    X(22, mtx_trylock, "") \
    X(23, mtx_unlock, "") \
    X(24, pthread_barrier_destroy, "") \
    X(25, pthread_barrier_init, "") \
    X(26, pthread_barrier_wait, "") \
    X(27, pthread_cond_broadcast, "GLIBC_2.3.2") \
    X(28, pthread_cond_clockwait, "") \
    X(29, pthread_cond_destroy, "GLIBC_2.3.2") \
    X(30, pthread_cond_init, "GLIBC_2.3.2") \
    X(31, pthread_cond_signal, "GLIBC_2.3.2") \
    X(32, pthread_cond_timedwait, "GLIBC_2.3.2") \
    X(33, pthread_cond_wait, "GLIBC_2.3.2") \
    X(34, pthread_mutex_clocklock, "") \
    X(35, pthread_mutex_destroy, "") \
    X(36, pthread_mutex_init, "") \
    X(37, pthread_mutex_lock, "") \
    X(38, pthread_mutex_timedlock, "") \
    X(39, pthread_mutex_trylock, "") \
    X(40, pthread_mutex_unlock, "") \
    X(41, pthread_rwlock_clockrdlock, "") \
    X(42, pthread_rwlock_clockwrlock, "") \
    X(43, pthread_rwlock_destroy, "") \
    X(44, pthread_rwlock_init, "") \
    X(45, pthread_rwlock_rdlock, "") \
    X(46, pthread_rwlock_timedrdlock, "") \
    X(47, pthread_rwlock_timedwrlock, "") \
    X(48, pthread_rwlock_tryrdlock, "") \
    X(49, pthread_rwlock_trywrlock, "") \
    X(50, pthread_rwlock_unlock, "") \
    X(51, pthread_rwlock_wrlock, "") \
    X(52, pthread_spin_destroy, "") \
    X(53, pthread_spin_init, "") \
    X(54, pthread_spin_lock, "") \
    X(55, pthread_spin_trylock, "") \
    X(56, pthread_spin_unlock, "") \
    X(57, sem_clockwait, "") \
    X(58, sem_destroy, "") \
    X(59, sem_getvalue, "") \
    X(60, sem_init, "") \
    X(61, sem_post, "") \
    X(62, sem_timedwait, "") \
    X(63, sem_trywait, "") \
    X(64, sem_wait, "")

#define COUNT_ONE(i, name, version) +1
enum { FUNCTIONS = 0 INTERPOSED(COUNT_ONE) };

/* Names and versions as arrays of characters, not of pointers: no
 * relocation, so loading the shim writes no page of its own for them. */
#define NAME(i, name, version) #name,
static const char names[FUNCTIONS][32] = {INTERPOSED(NAME)};
#define VERSION(i, name, version) version,
static const char versions[FUNCTIONS][12] = {INTERPOSED(VERSION)};

/* The implementation's file, looked for beside this object. */
#define IMPLEMENTATION "libwaitwise_interposer.so"
/* Its one lookup function: the implementation of an interposed function by
 * name, or null. */
#define LOOKUP "waitwise_interposer_function"

/* Where each interposed function jumps: null until bound. Read by the
 * trampolines below (hidden, so they reach it without the GOT). */
__attribute__((visibility("hidden"))) void *_Atomic waitwise_slots[FUNCTIONS];

/* Exported so that the implementation can tell that the first definition
 * of a pthread function in the process is this object's. */
__attribute__((visibility("default"))) const char waitwise_preload_shim[] = "waitwise";

/* Each function: jump through its slot, or, while it is null, to the binder
 * with its index in %r11 (a scratch register no argument uses). */
#define TRAMPOLINE(i, name, version) \
    __asm__(".text\n" \
            ".globl " #name "\n" \
            ".type " #name ", @function\n" \
            ".p2align 4\n" #name ":\n" \
            "\t.cfi_startproc\n" \
            "\tmovq waitwise_slots+8*" #i "(%rip), %r11\n" \
            "\ttestq %r11, %r11\n" \
            "\tjz 1f\n" \
            "\tjmp *%r11\n" \
            "1:\tmovl $" #i ", %r11d\n" \
            "\tjmp waitwise_bind_and_call\n" \
            "\t.cfi_endproc\n" \
            ".size " #name ", .-" #name "\n");
INTERPOSED(TRAMPOLINE)

/* Saves the argument registers (integer ones: no interposed function takes
 * a floating-point or variadic argument), asks `waitwise_bind` for the
 * function of index %r11, and jumps to it with the arguments restored. */
__asm__(".text\n"
        ".type waitwise_bind_and_call, @function\n"
        ".p2align 4\n"
        "waitwise_bind_and_call:\n"
        "\t.cfi_startproc\n"
        "\tpushq %rdi\n\t.cfi_adjust_cfa_offset 8\n"
        "\tpushq %rsi\n\t.cfi_adjust_cfa_offset 8\n"
        "\tpushq %rdx\n\t.cfi_adjust_cfa_offset 8\n"
        "\tpushq %rcx\n\t.cfi_adjust_cfa_offset 8\n"
        "\tpushq %r8\n\t.cfi_adjust_cfa_offset 8\n"
        "\tpushq %r9\n\t.cfi_adjust_cfa_offset 8\n"
        /* Seven pushes after the caller's return address: the stack is
         * 16-byte aligned for the call. */
        "\tpushq %rax\n\t.cfi_adjust_cfa_offset 8\n"
        "\tmovl %r11d, %edi\n"
        "\tcall waitwise_bind\n"
        "\tmovq %rax, %r11\n"
        "\tpopq %rax\n\t.cfi_adjust_cfa_offset -8\n"
        "\tpopq %r9\n\t.cfi_adjust_cfa_offset -8\n"
        "\tpopq %r8\n\t.cfi_adjust_cfa_offset -8\n"
        "\tpopq %rcx\n\t.cfi_adjust_cfa_offset -8\n"
        "\tpopq %rdx\n\t.cfi_adjust_cfa_offset -8\n"
        "\tpopq %rsi\n\t.cfi_adjust_cfa_offset -8\n"
        "\tpopq %rdi\n\t.cfi_adjust_cfa_offset -8\n"
        "\tjmp *%r11\n"
        "\t.cfi_endproc\n"
        ".size waitwise_bind_and_call, .-waitwise_bind_and_call\n");

/* The calling thread, without a call: its thread pointer. */
static uintptr_t this_thread(void) { return (uintptr_t)__builtin_thread_pointer(); }

enum { UNDECIDED, DECIDING, DECIDED };
static _Atomic int state = UNDECIDED;
/* The thread deciding, while `state` is DECIDING. */
static _Atomic uintptr_t decider;

/* The first byte of this object, as mapped (defined by the linker). */
extern const char __ehdr_start[] __attribute__((visibility("hidden")));

/* strcmp's order, without a call: the shim's own imports are bound lazily,
 * each at its first call, and a process that stays on the C library makes
 * none of them. */
static int compare(const char *a, const char *b) {
    while (*a && *a == *b)
        a++, b++;
    return (unsigned char)*a - (unsigned char)*b;
}

static int is_interposed(const char *name) {
    /* Every name starts with one of these: most imports are rejected
     * without a search. */
    if (name[0] != '_' && name[0] != 'p' && name[0] != 's' && name[0] != 'm' && name[0] != 'c')
        return 0;
    unsigned low = 0, high = FUNCTIONS;
    while (low < high) {
        unsigned middle = (low + high) / 2;
        int order = compare(name, names[middle]);
        if (order == 0)
            return 1;
        if (order < 0)
            high = middle;
        else
            low = middle + 1;
    }
    return 0;
}

/* An address from an object's dynamic section: glibc stores most of them
 * relocated, but not in a read-only dynamic section (the vDSO's). */
static uintptr_t dynamic_address(ElfW(Addr) base, ElfW(Addr) value) {
    return value < base ? base + value : value;
}

/* Whether one of `count` relocations refers to an interposed function that
 * the object does not define. */
static int relocations_import(const ElfW(Rela) *relocations, size_t count, const ElfW(Sym) *symbols,
                              const char *strings) {
    for (size_t k = 0; k < count; k++) {
        size_t index = ELF64_R_SYM(relocations[k].r_info);
        if (index == 0)
            continue;
        const ElfW(Sym) *symbol = &symbols[index];
        if (symbol->st_shndx == SHN_UNDEF && is_interposed(strings + symbol->st_name))
            return 1;
    }
    return 0;
}

/* Whether the object loaded at `base` with dynamic section `dynamic`
 * imports an interposed function: one of its relocations (of the PLT or
 * not: a function's address taken, or a call through the GOT) names one
 * that it does not define. */
static int object_imports_interposed(ElfW(Addr) base, const ElfW(Dyn) *dynamic) {
    uintptr_t symbols = 0, strings = 0, rela = 0, jmprel = 0;
    size_t rela_size = 0, jmprel_size = 0;
    long plt_kind = DT_RELA;
    for (const ElfW(Dyn) *d = dynamic; d->d_tag != DT_NULL; d++) {
        switch (d->d_tag) {
        case DT_SYMTAB: symbols = dynamic_address(base, d->d_un.d_ptr); break;
        case DT_STRTAB: strings = dynamic_address(base, d->d_un.d_ptr); break;
        case DT_RELA: rela = dynamic_address(base, d->d_un.d_ptr); break;
        case DT_RELASZ: rela_size = d->d_un.d_val; break;
        case DT_JMPREL: jmprel = dynamic_address(base, d->d_un.d_ptr); break;
        case DT_PLTRELSZ: jmprel_size = d->d_un.d_val; break;
        case DT_PLTREL: plt_kind = (long)d->d_un.d_val; break;
        }
    }
    if (!symbols || !strings)
        return 0;
    const ElfW(Sym) *syms = (const ElfW(Sym) *)symbols;
    const char *strs = (const char *)strings;
    if (rela && relocations_import((const ElfW(Rela) *)rela, rela_size / sizeof(ElfW(Rela)), syms, strs))
        return 1;
    return jmprel && plt_kind == DT_RELA &&
           relocations_import((const ElfW(Rela) *)jmprel, jmprel_size / sizeof(ElfW(Rela)), syms, strs);
}

/* Whether `name`, a path, names the file `file` (a '/' and a name). */
static int path_ends_with(const char *name, const char *file) {
    const char *end = name, *file_end = file;
    while (*end)
        end++;
    while (*file_end)
        file_end++;
    return end - name >= file_end - file && compare(end - (file_end - file), file) == 0;
}

/* The C library in the dynamic linker's list. */
static const struct link_map *c_library(void) {
    for (const struct link_map *object = _r_debug.r_map; object; object = object->l_next)
        if (object->l_name && path_ends_with(object->l_name, "/libc.so.6"))
            return object;
    return NULL;
}

/* The GNU hash of a symbol name (the ELF gABI extension's, djb2). */
static uint32_t gnu_hash(const char *name) {
    uint32_t h = 5381;
    for (; *name; name++)
        h = h * 33 + (unsigned char)*name;
    return h;
}

/* Whether symbol `k`'s version is `version`, or the default one when
 * `version` is empty. */
static int version_matches(const ElfW(Half) *versym, const ElfW(Verdef) *verdef, const char *strings,
                           size_t k, const char *version) {
    if (!versym)
        return 1;
    if (!version[0])
        return !(versym[k] & 0x8000);
    for (const ElfW(Verdef) *d = verdef; d;
         d = d->vd_next ? (const ElfW(Verdef) *)((const char *)d + d->vd_next) : NULL) {
        const ElfW(Verdaux) *aux = (const ElfW(Verdaux) *)((const char *)d + d->vd_aux);
        if (compare(strings + aux->vda_name, version) == 0)
            return (versym[k] & 0x7fff) == d->vd_ndx;
    }
    return 0;
}

/* The C library's function of index `i`, found in its symbol table by its
 * GNU hash: no call, no lock and no allocation (unlike dlsym), so a signal
 * handler's first sem_post can bind it. */
static void *c_library_function(unsigned i) {
    const struct link_map *libc = c_library();
    const ElfW(Sym) *symbols = NULL;
    const char *strings = NULL;
    const uint32_t *hash = NULL;
    const ElfW(Half) *versym = NULL;
    const ElfW(Verdef) *verdef = NULL;
    for (const ElfW(Dyn) *d = libc ? libc->l_ld : NULL; d && d->d_tag != DT_NULL; d++) {
        uintptr_t address = dynamic_address(libc->l_addr, d->d_un.d_ptr);
        switch (d->d_tag) {
        case DT_SYMTAB: symbols = (const ElfW(Sym) *)address; break;
        case DT_STRTAB: strings = (const char *)address; break;
        case DT_GNU_HASH: hash = (const uint32_t *)address; break;
        case DT_VERSYM: versym = (const ElfW(Half) *)address; break;
        case DT_VERDEF: verdef = (const ElfW(Verdef) *)address; break;
        }
    }
    if (symbols && strings && hash) {
        /* nbuckets, symoffset, bloom words, bloom shift; the bloom filter;
         * the buckets; the chain of hashes from symoffset on. */
        uint32_t buckets = hash[0], symoffset = hash[1], bloom_words = hash[2];
        const uint32_t *bucket = (const uint32_t *)((const ElfW(Addr) *)(hash + 4) + bloom_words);
        const uint32_t *chain = bucket + buckets;
        uint32_t h = gnu_hash(names[i]);
        for (uint32_t k = bucket[h % buckets]; k >= symoffset && k != 0; k++) {
            uint32_t entry = chain[k - symoffset];
            const ElfW(Sym) *symbol = &symbols[k];
            if ((entry | 1) == (h | 1) && symbol->st_shndx != SHN_UNDEF &&
                compare(strings + symbol->st_name, names[i]) == 0 &&
                version_matches(versym, verdef, strings, k, versions[i]))
                return (void *)(libc->l_addr + symbol->st_value);
            if (entry & 1)
                break;
        }
    }
    static const char message[] = "waitwise: cannot find a pthread function in the C library; aborting\n";
    if (write(2, message, sizeof message - 1) < 0) {
    }
    abort();
}

/* Whether `variable` is `prefix` (a name and '=') and a value that turns
 * output on: neither empty nor "0". */
static int set_to_something(const char *variable, const char *prefix) {
    while (*prefix && *variable == *prefix)
        variable++, prefix++;
    return !*prefix && *variable && !(variable[0] == '0' && !variable[1]);
}

/* Whether WAITWISE_STATS or WAITWISE_PROFILE asks for output, read
 * from the environment without a call. */
static int output_wanted(void) {
    static const char stats[] = "WAITWISE_STATS=", profile[] = "WAITWISE_PROFILE=";
    for (char **variable = __environ; variable && *variable; variable++) {
        const char *v = *variable;
        if (v[0] != 'W' || v[1] != 'A')
            continue;
        if (set_to_something(v, stats) || set_to_something(v, profile))
            return 1;
    }
    return 0;
}

/* Whether this process waits with waitwise (see the top of the file): the
 * objects loaded so far are those of the dynamic linker's list, walked
 * without a call (and without its lock: this runs while the process has one
 * thread, from a constructor or an earlier one's call). */
static int waitwise_wanted(void) {
    if (output_wanted())
        return 1;
    /* The C library calls its own functions directly; this object defines
     * them. */
    const struct link_map *libc = c_library();
    for (const struct link_map *object = _r_debug.r_map; object; object = object->l_next)
        if (object != libc && object->l_addr != (ElfW(Addr))__ehdr_start && object->l_ld &&
            object_imports_interposed(object->l_addr, object->l_ld))
            return 1;
    return 0;
}

/* Loads the implementation and points every slot into it; on failure says
 * why on stderr and leaves the slots to the C library. */
static void load_implementation(void) {
    Dl_info self;
    char path[PATH_MAX];
    if (!dladdr((const void *)__ehdr_start, &self) || !self.dli_fname) {
        fprintf(stderr, "waitwise: cannot find where libwaitwise_preload.so was loaded from; "
                        "the program waits with the C library's functions\n");
        return;
    }
    const char *slash = strrchr(self.dli_fname, '/');
    size_t dir = slash ? (size_t)(slash - self.dli_fname) + 1 : 0;
    if (dir + sizeof IMPLEMENTATION > sizeof path) {
        fprintf(stderr, "waitwise: the path of libwaitwise_preload.so is too long; "
                        "the program waits with the C library's functions\n");
        return;
    }
    memcpy(path, self.dli_fname, dir);
    memcpy(path + dir, IMPLEMENTATION, sizeof IMPLEMENTATION);
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        fprintf(stderr, "waitwise: cannot load %s (%s); the program waits with the C library's functions\n",
                path, dlerror());
        return;
    }
    void *(*lookup)(const char *) = (void *(*)(const char *))dlsym(handle, LOOKUP);
    void *found[FUNCTIONS];
    for (unsigned i = 0; i < FUNCTIONS; i++) {
        found[i] = lookup ? lookup(names[i]) : NULL;
        if (!found[i]) {
            fprintf(stderr, "waitwise: %s does not implement %s (a build of another version?); "
                            "the program waits with the C library's functions\n",
                    path, names[i]);
            return;
        }
    }
    for (unsigned i = 0; i < FUNCTIONS; i++)
        atomic_store_explicit(&waitwise_slots[i], found[i], memory_order_relaxed);
}

/* Makes the decision once. Another thread that calls meanwhile waits for
 * it; the deciding thread's own calls made by the loading return at once
 * (their caller then runs the C library's function). */
static void decide(void) {
    int expected = UNDECIDED;
    if (!atomic_compare_exchange_strong(&state, &expected, DECIDING)) {
        if (expected == DECIDING && atomic_load(&decider) != this_thread())
            while (atomic_load_explicit(&state, memory_order_acquire) != DECIDED)
                sched_yield();
        return;
    }
    atomic_store(&decider, this_thread());
    if (waitwise_wanted())
        load_implementation();
    atomic_store_explicit(&state, DECIDED, memory_order_release);
}

/* The function a call of index `i` goes to: decides first if nothing has;
 * binds the C library's function to an unbound slot. A call made by the
 * implementation's loading (on the deciding thread) gets the C library's
 * function without binding it. */
__attribute__((visibility("hidden"), used)) void *waitwise_bind(unsigned i) {
    decide();
    void *f = atomic_load_explicit(&waitwise_slots[i], memory_order_relaxed);
    if (f)
        return f;
    f = c_library_function(i);
    if (atomic_load_explicit(&state, memory_order_acquire) == DECIDED)
        atomic_store_explicit(&waitwise_slots[i], f, memory_order_relaxed);
    return f;
}

__attribute__((constructor)) static void on_load(void) { decide(); }
