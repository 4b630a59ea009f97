//! Criterion benches for SM4 (regression tracking): a few modes at 4096
//! bytes on the backend this CPU picks, the key schedule on every backend
//! this CPU has, and the RustCrypto `sm4` crate.
use cipher::{
    BlockCipherEncrypt, BlockModeDecrypt, BlockModeEncrypt, BlockSizeUser, InnerIvInit, KeyInit,
    StreamCipher, array::Array, common::InnerInit, consts::U16,
};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

type Blk = Array<u8, U16>;

fn blocks(buf: &mut [u8]) -> &mut [Blk] {
    Blk::slice_as_chunks_mut(buf).0
}

fn group<C>(c: &mut Criterion, name: &str, cipher: C)
where
    C: BlockCipherEncrypt + cipher::BlockCipherDecrypt + BlockSizeUser<BlockSize = U16>,
{
    let mut g = c.benchmark_group(format!("sm4/{name}"));
    g.throughput(Throughput::Bytes(4096));
    let mut buf = vec![0u8; 4096];
    let iv = [0u8; 16];
    g.bench_function("ecb-enc", |b| {
        b.iter(|| {
            ecb::Encryptor::<&C>::inner_init(&cipher).encrypt_blocks(blocks(black_box(&mut buf)))
        })
    });
    g.bench_function("cbc-enc", |b| {
        b.iter(|| {
            cbc::Encryptor::<&C>::inner_iv_init(&cipher, &iv.into())
                .encrypt_blocks(blocks(black_box(&mut buf)))
        })
    });
    g.bench_function("cbc-dec", |b| {
        b.iter(|| {
            cbc::Decryptor::<&C>::inner_iv_init(&cipher, &iv.into())
                .decrypt_blocks(blocks(black_box(&mut buf)))
        })
    });
    g.bench_function("ctr", |b| {
        b.iter(|| {
            ctr::Ctr128BE::<&C>::from_core(ctr::CtrCore::inner_iv_init(&cipher, &iv.into()))
                .apply_keystream(black_box(&mut buf))
        })
    });
    g.finish();
}

/// `Sm4::new` per backend: the key schedule (32 serial S-box evaluations
/// on one word) and the reversed decryption copy.
fn key_setup(c: &mut Criterion) {
    let key = [0x42u8; 16];
    let mut g = c.benchmark_group("sm4/key-setup");
    for backend in sm4_simd::Backend::ALL
        .into_iter()
        .filter(|b| b.is_available())
    {
        g.bench_function(backend.name(), |b| {
            b.iter(|| sm4_simd::Sm4::with_backend(black_box(&key), backend))
        });
    }
    g.bench_function("rustcrypto-sm4", |b| {
        b.iter(|| rc_sm4::Sm4::new(black_box(&key).into()))
    });
    g.finish();
}

fn bench(c: &mut Criterion) {
    let key = [0x42u8; 16];
    group(c, sm4_simd::backend(), sm4_simd::Sm4::new(&key.into()));
    group(c, "rustcrypto-sm4", rc_sm4::Sm4::new(&key.into()));
    key_setup(c);
}

criterion_group!(benches, bench);
criterion_main!(benches);
