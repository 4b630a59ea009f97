//! The type aliases and constants named as RustCrypto `poly1305` names its
//! own (`Key`, `Block`, `Tag`, `KEY_SIZE`, `BLOCK_SIZE`, the
//! `universal_hash` re-export), used through the `UniversalHash` interface.
//! NHPoly1305 is a different function from Poly1305: only the names carry
//! over, not the outputs.

use nhpoly1305::universal_hash::{KeyInit, UniversalHash};
use nhpoly1305::{BLOCK_SIZE, Block, KEY_SIZE, Key, NhPoly1305, Tag};

#[test]
fn universal_hash_through_the_aliases() {
    let key = Key::from([0x5a; KEY_SIZE]);
    let blocks = [Block::from([1; BLOCK_SIZE]), Block::from([2; BLOCK_SIZE])];

    // The inherent byte-oriented `update`/`finalize` take precedence over
    // the trait's block-oriented ones, hence the trait-qualified calls.
    let mut h = <NhPoly1305 as KeyInit>::new(&key);
    UniversalHash::update(&mut h, &blocks);
    let tag: Tag = UniversalHash::finalize(h);

    // The same bytes through the byte-oriented inherent API.
    let mut bytes = [0u8; 2 * BLOCK_SIZE];
    bytes[..BLOCK_SIZE].fill(1);
    bytes[BLOCK_SIZE..].fill(2);
    let mut h = NhPoly1305::new(&[0x5a; KEY_SIZE]);
    h.update(&bytes);
    assert_eq!(h.finalize(), tag[..]);

    // `verify` compares in constant time.
    let mut h = <NhPoly1305 as KeyInit>::new(&key);
    UniversalHash::update(&mut h, &blocks);
    h.verify(&tag).unwrap();
}
