/*
 * gcrycount: the libgcrypt side of `armcount` (benches/src/bin/armcount.rs)
 * for scripts/arm-perf.sh. Same command line and output:
 *
 *   gcrycount --list          every row id, one a line
 *   gcrycount ID SIZE CALLS   CALLS messages of SIZE bytes, then `bytes SIZE`
 *
 * Each call is what the matching row of ours does per message: a keyed
 * handle is made once; per message the IV, counter or nonce is set (a
 * stream cipher is keyed again, as our rows construct the cipher per
 * message), the message is processed in place, and a MAC or tag is read.
 */
#include <gcrypt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum kind { CIPHER, AEAD_GCM, AEAD_CCM, MAC, DIGEST };

struct op {
    const char *id;
    enum kind kind;
    int algo, mode; /* cipher or MAC or digest algorithm; cipher mode */
    int decrypt;
    int rekey; /* key again per message (stream ciphers) */
    size_t keylen, ivlen, unit; /* unit: sizes must be multiples of it */
};

static const struct op ops[] = {
    {"sm4/ecb-enc/libgcrypt", CIPHER, GCRY_CIPHER_SM4, GCRY_CIPHER_MODE_ECB, 0, 0, 16, 0, 16},
    {"sm4/ecb-dec/libgcrypt", CIPHER, GCRY_CIPHER_SM4, GCRY_CIPHER_MODE_ECB, 1, 0, 16, 0, 16},
    {"sm4/cbc-enc/libgcrypt", CIPHER, GCRY_CIPHER_SM4, GCRY_CIPHER_MODE_CBC, 0, 0, 16, 16, 16},
    {"sm4/cbc-dec/libgcrypt", CIPHER, GCRY_CIPHER_SM4, GCRY_CIPHER_MODE_CBC, 1, 0, 16, 16, 16},
    {"sm4/cfb-enc/libgcrypt", CIPHER, GCRY_CIPHER_SM4, GCRY_CIPHER_MODE_CFB, 0, 0, 16, 16, 16},
    {"sm4/cfb-dec/libgcrypt", CIPHER, GCRY_CIPHER_SM4, GCRY_CIPHER_MODE_CFB, 1, 0, 16, 16, 16},
    {"sm4/ofb/libgcrypt", CIPHER, GCRY_CIPHER_SM4, GCRY_CIPHER_MODE_OFB, 0, 0, 16, 16, 1},
    {"sm4/ctr/libgcrypt", CIPHER, GCRY_CIPHER_SM4, GCRY_CIPHER_MODE_CTR, 0, 0, 16, 16, 1},
    {"sm4/xts-enc/libgcrypt", CIPHER, GCRY_CIPHER_SM4, GCRY_CIPHER_MODE_XTS, 0, 0, 32, 16, 16},
    {"sm4/xts-dec/libgcrypt", CIPHER, GCRY_CIPHER_SM4, GCRY_CIPHER_MODE_XTS, 1, 0, 32, 16, 16},
    {"sm4/gcm-enc/libgcrypt", AEAD_GCM, GCRY_CIPHER_SM4, GCRY_CIPHER_MODE_GCM, 0, 0, 16, 12, 1},
    {"sm4/ccm-enc/libgcrypt", AEAD_CCM, GCRY_CIPHER_SM4, GCRY_CIPHER_MODE_CCM, 0, 0, 16, 12, 1},
    {"cmac/sm4/libgcrypt", MAC, GCRY_MAC_CMAC_SM4, 0, 0, 0, 16, 0, 1},
    {"sm3/digest/libgcrypt", DIGEST, GCRY_MD_SM3, 0, 0, 0, 0, 0, 1},
    {"chacha20/stream/libgcrypt", CIPHER, GCRY_CIPHER_CHACHA20, GCRY_CIPHER_MODE_STREAM, 0, 1, 32, 12, 1},
};
#define N_OPS (sizeof ops / sizeof ops[0])

static void check(gcry_error_t err, const char *what)
{
    if (err) {
        fprintf(stderr, "gcrycount: %s: %s\n", what, gcry_strerror(err));
        exit(1);
    }
}

int main(int argc, char **argv)
{
    static const unsigned char key[32] = {0x42, 0x42, 0x42, 0x42, 0x42, 0x42, 0x42, 0x42,
                                          0x42, 0x42, 0x42, 0x42, 0x42, 0x42, 0x42, 0x42,
                                          0x17, 0x17, 0x17, 0x17, 0x17, 0x17, 0x17, 0x17,
                                          0x17, 0x17, 0x17, 0x17, 0x17, 0x17, 0x17, 0x17};
    unsigned char iv[16], tag[32];
    const struct op *op = NULL;
    gcry_cipher_hd_t c = NULL;
    gcry_mac_hd_t m = NULL;
    gcry_md_hd_t d = NULL;
    unsigned char *buf;
    size_t size, i;
    unsigned long long calls, n;

    if (argc == 2 && strcmp(argv[1], "--list") == 0) {
        for (i = 0; i < N_OPS; i++)
            puts(ops[i].id);
        return 0;
    }
    if (argc != 4) {
        fputs("usage: gcrycount --list | gcrycount ID SIZE CALLS\n", stderr);
        return 2;
    }
    for (i = 0; i < N_OPS; i++)
        if (strcmp(argv[1], ops[i].id) == 0)
            op = &ops[i];
    if (op == NULL) {
        fprintf(stderr, "gcrycount: no row %s (see --list)\n", argv[1]);
        return 2;
    }
    size = strtoul(argv[2], NULL, 10);
    calls = strtoull(argv[3], NULL, 10);
    if (size % op->unit != 0) {
        fprintf(stderr, "gcrycount: row %s does not take %zu-byte messages\n", op->id, size);
        return 3;
    }

    if (!gcry_check_version(GCRYPT_VERSION)) {
        fputs("gcrycount: libgcrypt version mismatch\n", stderr);
        return 1;
    }
    gcry_control(GCRYCTL_DISABLE_SECMEM, 0);
    gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);

    buf = malloc(size ? size : 1);
    if (buf == NULL)
        return 1;
    memset(buf, 0x5a, size);
    memset(iv, 0x24, sizeof iv);

    switch (op->kind) {
    case CIPHER:
    case AEAD_GCM:
    case AEAD_CCM:
        check(gcry_cipher_open(&c, op->algo, op->mode, 0), "cipher_open");
        check(gcry_cipher_setkey(c, key, op->keylen), "setkey");
        break;
    case MAC:
        check(gcry_mac_open(&m, op->algo, 0, NULL), "mac_open");
        check(gcry_mac_setkey(m, key, op->keylen), "mac_setkey");
        break;
    case DIGEST:
        check(gcry_md_open(&d, op->algo, 0), "md_open");
        break;
    }

    for (n = 0; n < calls; n++) {
        switch (op->kind) {
        case CIPHER:
            if (op->rekey)
                check(gcry_cipher_setkey(c, key, op->keylen), "setkey");
            if (op->mode == GCRY_CIPHER_MODE_CTR)
                check(gcry_cipher_setctr(c, iv, 16), "setctr");
            else if (op->ivlen)
                check(gcry_cipher_setiv(c, iv, op->ivlen), "setiv");
            if (op->decrypt)
                check(gcry_cipher_decrypt(c, buf, size, NULL, 0), "decrypt");
            else
                check(gcry_cipher_encrypt(c, buf, size, NULL, 0), "encrypt");
            break;
        case AEAD_GCM:
            check(gcry_cipher_setiv(c, iv, op->ivlen), "setiv");
            check(gcry_cipher_final(c), "final");
            check(gcry_cipher_encrypt(c, buf, size, NULL, 0), "encrypt");
            check(gcry_cipher_gettag(c, tag, 16), "gettag");
            break;
        case AEAD_CCM: {
            uint64_t lens[3] = {size, 0, 16};
            check(gcry_cipher_setiv(c, iv, op->ivlen), "setiv");
            check(gcry_cipher_ctl(c, GCRYCTL_SET_CCM_LENGTHS, lens, sizeof lens), "ccm lengths");
            check(gcry_cipher_encrypt(c, buf, size, NULL, 0), "encrypt");
            check(gcry_cipher_gettag(c, tag, 16), "gettag");
            break;
        }
        case MAC: {
            size_t len = 16;
            check(gcry_mac_reset(m), "mac_reset");
            check(gcry_mac_write(m, buf, size), "mac_write");
            check(gcry_mac_read(m, tag, &len), "mac_read");
            break;
        }
        case DIGEST:
            gcry_md_reset(d);
            gcry_md_write(d, buf, size);
            memcpy(tag, gcry_md_read(d, op->algo), 32);
            break;
        }
        /* Keep the result observable, as black_box does for ours. */
        __asm__ volatile("" : : "r"(buf), "r"(tag) : "memory");
    }
    printf("bytes %zu\n", size);
    return 0;
}
