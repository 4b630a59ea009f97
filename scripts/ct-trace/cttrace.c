/*
 * cttrace: a QEMU TCG plugin (qemu-user, plugin API version 1 as in
 * QEMU 7.2) for the constant-time trace check of the aarch64 backends.
 *
 * The driver (the `cttrace` workspace member) runs every operation in
 * pairs of runs with different secrets of the same lengths, each run
 * between a call of `cttrace_mark_begin` and one of `cttrace_mark_end`
 * (found by symbol name). Between the two marks the plugin records every
 * executed instruction's address and every memory access's address (and
 * its size/direction bits) into a running 64-bit hash and a counter; the
 * first run of a pair is also kept in full (up to `cap` events) so that
 * the second run can be compared event by event and the first divergence
 * reported with its instruction, symbol and the last instruction the two
 * runs had in common (the branch that went two ways, or the load or store
 * whose address differed).
 *
 * One line per pair goes to the file named by `out=` (flushed at once, so
 * the driver reads it back at its end):
 *   pair <k> same <events> <hash>
 *   pair <k> differs <eventsA> <eventsB> <index> | <what> | <what> | <what>
 * after a first line `begin-mark <its run-time address>`, and a final line
 * `segments <n>`.
 *
 * Arguments: out=<file> (required), cap=<events kept per run, default
 * 4000000>.
 *
 * The plugin API functions are declared here (the Debian qemu-user package
 * ships no qemu-plugin.h); names, signatures and the version number are
 * those of QEMU 7.2's documented plugin API.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the QEMU 7.2 plugin API, as far as this plugin uses it ---- */
#define EXPORTED __attribute__((visibility("default")))

typedef uint64_t plugin_id;
typedef uint32_t mem_info;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
struct qemu_info_t; /* only ever passed by pointer here */

enum { CB_NO_REGS = 0 };     /* callbacks that read no guest register */
enum { MEM_READS_AND_WRITES = 3 };

typedef void (*tb_trans_fn)(plugin_id, struct qemu_plugin_tb *);
typedef void (*vcpu_data_fn)(unsigned int vcpu, void *data);
typedef void (*vcpu_mem_fn)(unsigned int vcpu, mem_info info, uint64_t vaddr, void *data);
typedef void (*id_data_fn)(plugin_id, void *data);

void qemu_plugin_register_vcpu_tb_trans_cb(plugin_id id, tb_trans_fn cb);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t i);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
const char *qemu_plugin_insn_symbol(const struct qemu_plugin_insn *insn);
char *qemu_plugin_insn_disas(const struct qemu_plugin_insn *insn);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn, vcpu_data_fn cb,
                                            int flags, void *data);
void qemu_plugin_register_vcpu_mem_cb(struct qemu_plugin_insn *insn, vcpu_mem_fn cb, int flags,
                                      int rw, void *data);
void qemu_plugin_register_atexit_cb(plugin_id id, id_data_fn cb, void *data);
bool qemu_plugin_mem_is_store(mem_info info);
unsigned int qemu_plugin_mem_size_shift(mem_info info);

/* The loader refuses a plugin without this symbol; 1 is 7.2's API level. */
EXPORTED int qemu_plugin_version = 1;

/* ---- state ---- */

/* What the plugin knows of one translated instruction. */
enum kind { PLAIN, BEGIN_MARK, END_MARK };
struct insn_info {
    uint64_t vaddr;
    const char *symbol; /* owned copy, "?" when unknown */
    char *disas;
    enum kind kind;
};

/* One event of a run: an instruction executed (addr = its address) or a
 * memory access (addr = the data address, info = size/direction bits + 1). */
struct event {
    uint64_t addr;
    const struct insn_info *insn;
    uint32_t info;
};

static FILE *out;
static size_t cap = 4000000;

static bool active;         /* between a begin and an end mark */
static uint64_t segment;    /* segments opened so far */
static uint64_t hash, count;
static uint64_t hash_a, count_a; /* the first run of the current pair */

static struct event *kept;  /* the first run, up to cap events */
static size_t kept_n;
static const struct insn_info *last_insn; /* last instruction event, this run */

/* The second run's first difference from the first. */
static bool diverged;
static uint64_t div_index;
static struct event div_a, div_b;
static const struct insn_info *div_common; /* last common instruction */

static uint64_t mix(uint64_t h, uint64_t v)
{
    /* A 64-bit multiply-xorshift mix: order-sensitive, cheap. */
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0xbf58476d1ce4e5b9ull;
    return h ^ (h >> 31);
}

static void record(uint64_t addr, const struct insn_info *insn, uint32_t info)
{
    bool first_run = (segment & 1) == 1; /* segments count from 1 */
    hash = mix(hash, addr ^ ((uint64_t)info << 56));
    if (first_run) {
        if (kept_n < cap) {
            kept[kept_n].addr = addr;
            kept[kept_n].insn = insn;
            kept[kept_n].info = info;
            kept_n++;
        }
    } else if (!diverged && count < kept_n) {
        const struct event *a = &kept[count];
        /* Instructions by address: a retranslated block has new infos. */
        if (a->addr != addr || a->info != info || a->insn->vaddr != insn->vaddr) {
            diverged = true;
            div_index = count;
            div_a = *a;
            div_b.addr = addr;
            div_b.insn = insn;
            div_b.info = info;
            div_common = last_insn;
        }
    }
    if (info == 0)
        last_insn = insn;
    count++;
}

static void begin_segment(const struct insn_info *mark)
{
    active = true;
    segment++;
    if (segment == 1) {
        /* Where the binary was loaded: the runner subtracts the mark's
         * link-time address to look addresses up in the binary. */
        fprintf(out, "begin-mark 0x%llx\n", (unsigned long long)mark->vaddr);
    }
    hash = 0x6a09e667f3bcc908ull;
    count = 0;
    last_insn = NULL;
    if (segment & 1) {
        kept_n = 0;
        diverged = false;
    }
}

static void describe(char *buf, size_t n, const struct event *e)
{
    if (e->info == 0)
        snprintf(buf, n, "executes 0x%llx in %s: %s", (unsigned long long)e->addr,
                 e->insn->symbol, e->insn->disas);
    else
        snprintf(buf, n, "%s %u bytes at 0x%llx by 0x%llx in %s: %s",
                 qemu_plugin_mem_is_store(e->info - 1) ? "stores" : "loads",
                 1u << qemu_plugin_mem_size_shift(e->info - 1),
                 (unsigned long long)e->addr, (unsigned long long)e->insn->vaddr,
                 e->insn->symbol, e->insn->disas);
}

static void end_segment(void)
{
    active = false;
    if (segment & 1) {
        hash_a = hash;
        count_a = count;
        return;
    }
    uint64_t pair = segment / 2 - 1;
    if (hash == hash_a && count == count_a && !diverged) {
        fprintf(out, "pair %llu same %llu %016llx\n", (unsigned long long)pair,
                (unsigned long long)count, (unsigned long long)hash);
    } else {
        char a[512], b[512], common[512];
        if (!diverged) {
            /* Beyond the kept prefix, or one run is a prefix of the other. */
            div_index = count < count_a ? count : count_a;
            snprintf(a, sizeof a, "first run: %llu events", (unsigned long long)count_a);
            snprintf(b, sizeof b, "second run: %llu events", (unsigned long long)count);
            snprintf(common, sizeof common, "no event-level position (prefix of %zu kept)",
                     kept_n);
        } else {
            char da[480], db[480];
            describe(da, sizeof da, &div_a);
            describe(db, sizeof db, &div_b);
            snprintf(a, sizeof a, "first run %s", da);
            snprintf(b, sizeof b, "second run %s", db);
            if (div_common)
                snprintf(common, sizeof common, "after 0x%llx in %s: %s",
                         (unsigned long long)div_common->vaddr, div_common->symbol,
                         div_common->disas);
            else
                snprintf(common, sizeof common, "at the first event");
        }
        fprintf(out, "pair %llu differs %llu %llu %llu | %s | %s | %s\n",
                (unsigned long long)pair, (unsigned long long)count_a,
                (unsigned long long)count, (unsigned long long)div_index, common, a, b);
    }
    fflush(out);
}

/* ---- callbacks ---- */

static void on_insn(unsigned int vcpu, void *data)
{
    const struct insn_info *ii = data;
    (void)vcpu;
    if (ii->kind == BEGIN_MARK) {
        if (!active)
            begin_segment(ii);
        return;
    }
    if (ii->kind == END_MARK) {
        if (active)
            end_segment();
        return;
    }
    if (active)
        record(ii->vaddr, ii, 0);
}

static void on_mem(unsigned int vcpu, mem_info info, uint64_t vaddr, void *data)
{
    const struct insn_info *ii = data;
    (void)vcpu;
    if (active && ii->kind == PLAIN)
        record(vaddr, ii, info + 1);
}

static enum kind kind_of(const char *symbol)
{
    if (symbol && strstr(symbol, "cttrace_mark_begin"))
        return BEGIN_MARK;
    if (symbol && strstr(symbol, "cttrace_mark_end"))
        return END_MARK;
    return PLAIN;
}

static void on_translate(plugin_id id, struct qemu_plugin_tb *tb)
{
    (void)id;
    size_t n = qemu_plugin_tb_n_insns(tb);
    for (size_t i = 0; i < n; i++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        struct insn_info *ii = calloc(1, sizeof *ii);
        const char *sym = qemu_plugin_insn_symbol(insn);
        if (!ii)
            abort();
        ii->vaddr = qemu_plugin_insn_vaddr(insn);
        ii->symbol = strdup(sym ? sym : "?");
        ii->disas = qemu_plugin_insn_disas(insn);
        ii->kind = kind_of(sym);
        qemu_plugin_register_vcpu_insn_exec_cb(insn, on_insn, CB_NO_REGS, ii);
        qemu_plugin_register_vcpu_mem_cb(insn, on_mem, CB_NO_REGS, MEM_READS_AND_WRITES, ii);
    }
}

static void at_exit(plugin_id id, void *data)
{
    (void)id;
    (void)data;
    fprintf(out, "segments %llu%s\n", (unsigned long long)segment,
            active ? " (the last one never ended)" : "");
    fclose(out);
}

EXPORTED int qemu_plugin_install(plugin_id id, const struct qemu_info_t *info, int argc,
                                 char **argv)
{
    const char *path = NULL;
    (void)info;
    for (int i = 0; i < argc; i++) {
        if (strncmp(argv[i], "out=", 4) == 0)
            path = argv[i] + 4;
        else if (strncmp(argv[i], "cap=", 4) == 0)
            cap = strtoull(argv[i] + 4, NULL, 10);
        else {
            fprintf(stderr, "cttrace: unknown argument %s\n", argv[i]);
            return -1;
        }
    }
    if (!path) {
        fprintf(stderr, "cttrace: out=<file> is required\n");
        return -1;
    }
    out = fopen(path, "w");
    kept = malloc((cap ? cap : 1) * sizeof *kept);
    if (!out || !kept) {
        fprintf(stderr, "cttrace: cannot open %s or allocate the trace\n", path);
        return -1;
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
    qemu_plugin_register_atexit_cb(id, at_exit, NULL);
    return 0;
}
