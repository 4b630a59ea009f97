/*
 * insncount: a qemu TCG plugin that counts the guest instructions a
 * program executes (qemu-user 7.2 and later: `-plugin insncount.so`).
 *
 * At translation time every block gets an inline add of its instruction
 * count to one 64-bit counter, so the count costs no helper call per
 * block. At exit the total is written as `insns N` to the file named by
 * the `out=PATH` argument (stderr without it). With `hot=N` the N blocks
 * that executed the most instructions follow, one line each:
 * `hot VADDR INSNS EXECS WORD...`, the words being the block's instruction
 * encodings in hex (4 bytes each on aarch64), ready for a disassembler.
 * That is where a program's loops are, for a pipeline model.
 *
 * Written for this project against the documented stable plugin API
 * (version 1); the few declarations it needs are below, so that no
 * qemu development header has to be installed.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
typedef struct qemu_info_t qemu_info_t;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };

void qemu_plugin_register_vcpu_tb_trans_cb(
    qemu_plugin_id_t id, void (*cb)(qemu_plugin_id_t, struct qemu_plugin_tb *));
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb,
                                              enum qemu_plugin_op op, void *ptr,
                                              uint64_t imm);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id,
                                    void (*cb)(qemu_plugin_id_t, void *),
                                    void *userdata);
struct qemu_plugin_insn;
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb,
                                                 size_t idx);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);

#define EXPORT __attribute__((visibility("default")))
EXPORT int qemu_plugin_version = 1;

static uint64_t total;
static const char *out_path;
static long hot_wanted;

/* One record per translation (a block translated twice has two). */
struct block {
    uint64_t vaddr, n_insns, execs;
    struct block *next;
    uint32_t words[]; /* n_insns encodings (0 where not 4 bytes long) */
};
static struct block *blocks;

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    size_t n = qemu_plugin_tb_n_insns(tb);
    (void)id;
    qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
                                             &total, n);
    if (hot_wanted > 0) {
        struct block *b = calloc(1, sizeof *b + n * sizeof b->words[0]);
        size_t i;
        if (b == NULL)
            return;
        for (i = 0; i < n; i++) {
            struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
            if (qemu_plugin_insn_size(insn) == sizeof b->words[0])
                memcpy(&b->words[i], qemu_plugin_insn_data(insn), sizeof b->words[0]);
        }
        b->vaddr = qemu_plugin_tb_vaddr(tb);
        b->n_insns = n;
        b->next = blocks;
        blocks = b;
        qemu_plugin_register_vcpu_tb_exec_inline(
            tb, QEMU_PLUGIN_INLINE_ADD_U64, &b->execs, 1);
    }
}

static int by_weight(const void *x, const void *y)
{
    const struct block *a = *(struct block *const *)x;
    const struct block *b = *(struct block *const *)y;
    uint64_t wa = a->n_insns * a->execs, wb = b->n_insns * b->execs;
    return wa < wb ? 1 : wa > wb ? -1 : 0;
}

static void on_exit_(qemu_plugin_id_t id, void *userdata)
{
    FILE *f = out_path ? fopen(out_path, "w") : stderr;
    size_t n = 0, i, k;
    struct block *b, **all;
    (void)id;
    (void)userdata;
    if (f == NULL)
        f = stderr;
    fprintf(f, "insns %" PRIu64 "\n", total);
    for (b = blocks; b != NULL; b = b->next)
        n++;
    all = n ? malloc(n * sizeof *all) : NULL;
    if (all != NULL) {
        for (i = 0, b = blocks; b != NULL; b = b->next)
            all[i++] = b;
        qsort(all, n, sizeof *all, by_weight);
        for (i = 0; i < n && i < (size_t)hot_wanted; i++) {
            fprintf(f, "hot 0x%" PRIx64 " %" PRIu64 " %" PRIu64, all[i]->vaddr,
                    all[i]->n_insns, all[i]->execs);
            for (k = 0; k < all[i]->n_insns; k++)
                fprintf(f, " %08" PRIx32, all[i]->words[k]);
            fputc('\n', f);
        }
        free(all);
    }
    if (f != stderr)
        fclose(f);
}

EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
                               int argc, char **argv)
{
    int i;
    (void)info;
    for (i = 0; i < argc; i++) {
        if (strncmp(argv[i], "out=", 4) == 0)
            out_path = argv[i] + 4;
        else if (strncmp(argv[i], "hot=", 4) == 0)
            hot_wanted = strtol(argv[i] + 4, NULL, 10);
        else {
            fprintf(stderr, "insncount: unknown argument %s\n", argv[i]);
            return -1;
        }
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
    qemu_plugin_register_atexit_cb(id, on_exit_, NULL);
    return 0;
}
