//! stub
use cipher::{Block, InOutBuf};
pub(crate) type ParBlocks = cipher::consts::U16;
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn crypt_blocks(rk: &[u32; 32], blocks: InOutBuf<'_, '_, Block<crate::Sm4>>) {
    super::soft::crypt_blocks(rk, blocks)
}
