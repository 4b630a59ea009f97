//! Hidden test and benchmark hooks that reach below the public types.
//! Beside the cipher type, above the dispatcher.

use crate::backends::{Backend, GcmBackend, GcmClosure, GhashEngine, with_gcm};
use crate::ghash::{Ghash, GhashKey};
use crate::kernel::Kernel;

/// Test and benchmark hook: GHASH over bytes with a chosen SM4 backend's
/// runner and GHASH engine. Hidden; not a public API.
#[doc(hidden)]
#[derive(Clone, Debug)]
pub struct GhashHook {
    key: GhashKey,
    gcm: GcmBackend,
}

impl GhashHook {
    /// Hash key `h` (the bytes of `E_K(0^128)`), engine `engine` in the
    /// runner of `backend`; `None` if the CPU lacks either or the pair
    /// has no runner.
    pub fn new(h: &[u8; 16], backend: Backend, engine: GhashEngine) -> Option<Self> {
        let gcm = GcmBackend::with_engine(backend, engine)?;
        Some(GhashHook {
            key: GhashKey::new(h),
            gcm,
        })
    }

    /// The engine.
    pub fn engine(&self) -> GhashEngine {
        self.gcm.engine()
    }

    /// Hash `data` into the GCM state `state` (zero-padding a partial
    /// last block), in one runner call.
    pub fn update_padded(&self, state: &mut [u8; 16], data: &[u8]) {
        struct Run<'a> {
            key: &'a GhashKey,
            state: &'a mut [u8; 16],
            data: &'a [u8],
        }
        impl GcmClosure for Run<'_> {
            type Output = ();
            #[inline(always)]
            fn call<K: Kernel, G: Ghash>(self, _k: K, g: G) {
                g.update_padded(self.key, self.state, self.data);
            }
        }
        with_gcm(
            self.gcm,
            Run {
                key: &self.key,
                state,
                data,
            },
        );
    }
}
