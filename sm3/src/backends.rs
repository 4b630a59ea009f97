//! Backend selection: the [`Backend`] tag for one message (chosen once per
//! hasher) and the [`Lanes`] tag for [`crate::digest_many`].
//!
//! Order in [`detect`]: forced `--cfg sm3_backend="..."`, Miri (soft),
//! runtime checks (best first), compile-time NEON on aarch64, soft.

pub(crate) mod lanes;
pub(crate) mod soft;

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx;
#[cfg(target_arch = "x86_64")]
pub(crate) mod avx2;
#[cfg(target_arch = "x86_64")]
pub(crate) mod avx512;

#[cfg(target_arch = "aarch64")]
pub(crate) mod neon;
#[cfg(target_arch = "aarch64")]
pub(crate) mod sm3ce;

#[cfg(all(
    any(sm3_backend = "avx", sm3_backend = "avx512"),
    not(target_arch = "x86_64")
))]
compile_error!("sm3: sm3_backend=\"avx\"/\"avx512\" needs an x86_64 target");
#[cfg(all(
    any(sm3_backend = "neon", sm3_backend = "sm3ce"),
    not(target_arch = "aarch64")
))]
compile_error!("sm3: sm3_backend=\"neon\"/\"sm3ce\" needs an aarch64 target");

#[cfg(target_arch = "x86_64")]
cpufeatures::new!(cpu_avx_bmi2, "avx", "bmi1", "bmi2");
#[cfg(target_arch = "x86_64")]
cpufeatures::new!(cpu_avx512vl, "avx512f", "avx512vl", "avx", "bmi1", "bmi2");
#[cfg(target_arch = "x86_64")]
cpufeatures::new!(cpu_avx2, "avx2");
#[cfg(target_arch = "x86_64")]
cpufeatures::new!(cpu_avx512, "avx512f", "avx512bw");
#[cfg(target_arch = "aarch64")]
cpufeatures::new!(cpu_sm3, "sm4");

/// The compression backend of one hasher (hidden test hook).
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Backend {
    /// Portable constant-time code.
    Soft,
    /// x86_64: message expansion with AVX, rounds with BMI2 `rorx`/`andn`.
    #[cfg(target_arch = "x86_64")]
    Avx,
    /// x86_64: as `Avx`, with the message expansion's rotations and
    /// three-input XORs in single AVX-512VL instructions.
    #[cfg(target_arch = "x86_64")]
    Avx512Vl,
    /// aarch64: message expansion with NEON, scalar rounds.
    #[cfg(target_arch = "aarch64")]
    Neon,
    /// aarch64: the ARMv8.2 SM3 instructions.
    #[cfg(target_arch = "aarch64")]
    Sm3ce,
}

const ALL: &[Backend] = &[
    Backend::Soft,
    #[cfg(target_arch = "x86_64")]
    Backend::Avx,
    #[cfg(target_arch = "x86_64")]
    Backend::Avx512Vl,
    #[cfg(target_arch = "aarch64")]
    Backend::Neon,
    #[cfg(target_arch = "aarch64")]
    Backend::Sm3ce,
];

impl Backend {
    /// The backend's name, as [`crate::backend`] prints it.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Soft => "soft",
            #[cfg(target_arch = "x86_64")]
            Backend::Avx => "avx",
            #[cfg(target_arch = "x86_64")]
            Backend::Avx512Vl => "avx512vl",
            #[cfg(target_arch = "aarch64")]
            Backend::Neon => "neon",
            #[cfg(target_arch = "aarch64")]
            Backend::Sm3ce => "sm3ce",
        }
    }

    /// Whether this CPU can run the backend.
    pub fn is_available(self) -> bool {
        match self {
            Backend::Soft => true,
            #[cfg(target_arch = "x86_64")]
            Backend::Avx => cpu_avx_bmi2::get(),
            #[cfg(target_arch = "x86_64")]
            Backend::Avx512Vl => cpu_avx512vl::get(),
            #[cfg(target_arch = "aarch64")]
            Backend::Neon => cfg!(target_feature = "neon"),
            #[cfg(target_arch = "aarch64")]
            Backend::Sm3ce => cpu_sm3::get(),
        }
    }

    /// Every backend this CPU can run, `soft` first.
    pub fn available() -> impl Iterator<Item = Backend> {
        ALL.iter().copied().filter(|b| b.is_available())
    }

    /// Compress whole blocks into `state`. The backend must be available
    /// (checked when the tag was made).
    #[inline]
    pub(crate) fn compress(self, state: &mut [u32; 8], blocks: &[[u8; 64]]) {
        (self.compress_fn())(state, blocks)
    }

    /// The backend's compression function (for the lane engines, which
    /// finish the stragglers with it and know nothing of `Backend`). The
    /// backend must be available.
    #[inline]
    pub(crate) fn compress_fn(self) -> lanes::Compress {
        match self {
            Backend::Soft => soft::compress,
            #[cfg(target_arch = "x86_64")]
            Backend::Avx => avx::compress,
            #[cfg(target_arch = "x86_64")]
            Backend::Avx512Vl => avx::compress_avx512vl,
            #[cfg(target_arch = "aarch64")]
            Backend::Neon => neon::compress,
            #[cfg(target_arch = "aarch64")]
            Backend::Sm3ce => sm3ce::compress,
        }
    }
}

#[allow(dead_code)] // used only under some forced `sm3_backend` values
fn forced_missing(name: &str) -> ! {
    panic!("sm3: sm3_backend=\"{name}\" is forced but this CPU lacks its instructions")
}

/// The best backend for one message on this CPU (or the forced one).
pub(crate) fn detect() -> Backend {
    #[cfg(sm3_backend = "soft")]
    return Backend::Soft;

    #[cfg(all(target_arch = "x86_64", sm3_backend = "avx"))]
    return if cpu_avx_bmi2::get() {
        Backend::Avx
    } else {
        forced_missing("avx")
    };

    #[cfg(all(target_arch = "x86_64", sm3_backend = "avx512"))]
    return if cpu_avx512vl::get() {
        Backend::Avx512Vl
    } else {
        forced_missing("avx512")
    };

    #[cfg(all(target_arch = "aarch64", sm3_backend = "neon"))]
    return Backend::Neon;

    #[cfg(all(target_arch = "aarch64", sm3_backend = "sm3ce"))]
    return if cpu_sm3::get() {
        Backend::Sm3ce
    } else {
        forced_missing("sm3ce")
    };

    #[allow(unreachable_code)]
    {
        if cfg!(miri) {
            return Backend::Soft;
        }
        #[cfg(target_arch = "x86_64")]
        {
            if cpu_avx512vl::get() {
                return Backend::Avx512Vl;
            }
            if cpu_avx_bmi2::get() {
                return Backend::Avx;
            }
        }
        #[cfg(target_arch = "aarch64")]
        {
            if cpu_sm3::get() {
                return Backend::Sm3ce;
            }
            if cfg!(target_feature = "neon") {
                return Backend::Neon;
            }
        }
        Backend::Soft
    }
}

/// The multi-message engine of [`crate::digest_many`] (hidden test hook).
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Lanes {
    /// One message after another with the one-message backend.
    Serial,
    /// x86_64 AVX2: 8 messages per step.
    #[cfg(target_arch = "x86_64")]
    Avx2,
    /// x86_64 AVX-512: 16 messages per step.
    #[cfg(target_arch = "x86_64")]
    Avx512,
    /// aarch64 NEON: 4 messages per step.
    #[cfg(target_arch = "aarch64")]
    Neon,
}

const ALL_LANES: &[Lanes] = &[
    Lanes::Serial,
    #[cfg(target_arch = "x86_64")]
    Lanes::Avx2,
    #[cfg(target_arch = "x86_64")]
    Lanes::Avx512,
    #[cfg(target_arch = "aarch64")]
    Lanes::Neon,
];

impl Lanes {
    /// The engine's name, as [`crate::digest_many_backend`] prints it.
    pub fn name(self) -> &'static str {
        match self {
            Lanes::Serial => "serial",
            #[cfg(target_arch = "x86_64")]
            Lanes::Avx2 => "avx2",
            #[cfg(target_arch = "x86_64")]
            Lanes::Avx512 => "avx512",
            #[cfg(target_arch = "aarch64")]
            Lanes::Neon => "neon",
        }
    }

    /// Messages hashed side by side.
    pub fn width(self) -> usize {
        match self {
            Lanes::Serial => 1,
            #[cfg(target_arch = "x86_64")]
            Lanes::Avx2 => 8,
            #[cfg(target_arch = "x86_64")]
            Lanes::Avx512 => 16,
            #[cfg(target_arch = "aarch64")]
            Lanes::Neon => 4,
        }
    }

    /// Whether this CPU can run the engine.
    pub fn is_available(self) -> bool {
        match self {
            Lanes::Serial => true,
            #[cfg(target_arch = "x86_64")]
            Lanes::Avx2 => cpu_avx2::get(),
            #[cfg(target_arch = "x86_64")]
            Lanes::Avx512 => cpu_avx512::get(),
            #[cfg(target_arch = "aarch64")]
            Lanes::Neon => cfg!(target_feature = "neon"),
        }
    }

    /// Every engine this CPU can run, `serial` first.
    pub fn available() -> impl Iterator<Item = Lanes> {
        ALL_LANES.iter().copied().filter(|b| b.is_available())
    }

    /// Hash `msgs[i]` into `out[i]`; `single` finishes the stragglers.
    /// Lengths are checked by the caller; `self` and `single` must be
    /// available.
    pub(crate) fn run(self, single: Backend, msgs: &[&[u8]], out: &mut [[u8; 32]]) {
        let single = single.compress_fn();
        match self {
            Lanes::Serial => {
                for (m, o) in msgs.iter().zip(out.iter_mut()) {
                    *o = lanes::hash_one(single, m);
                }
            }
            #[cfg(target_arch = "x86_64")]
            Lanes::Avx2 => avx2::digest_many(single, msgs, out),
            #[cfg(target_arch = "x86_64")]
            Lanes::Avx512 => avx512::digest_many(single, msgs, out),
            #[cfg(target_arch = "aarch64")]
            Lanes::Neon => neon::digest_many(single, msgs, out),
        }
    }
}

/// The best multi-message engine on this CPU (or the forced one's).
pub(crate) fn detect_lanes() -> Lanes {
    #[cfg(sm3_backend = "soft")]
    return Lanes::Serial;

    #[cfg(all(target_arch = "x86_64", sm3_backend = "avx"))]
    return if cpu_avx2::get() {
        Lanes::Avx2
    } else {
        forced_missing("avx")
    };

    #[cfg(all(target_arch = "x86_64", sm3_backend = "avx512"))]
    return if cpu_avx512::get() {
        Lanes::Avx512
    } else {
        forced_missing("avx512")
    };

    #[cfg(all(target_arch = "aarch64", sm3_backend = "neon"))]
    return Lanes::Neon;

    // The SM3 instructions hash one message faster than NEON hashes four.
    #[cfg(all(target_arch = "aarch64", sm3_backend = "sm3ce"))]
    return Lanes::Serial;

    #[allow(unreachable_code)]
    {
        if cfg!(miri) {
            return Lanes::Serial;
        }
        #[cfg(target_arch = "x86_64")]
        {
            if cpu_avx512::get() {
                return Lanes::Avx512;
            }
            if cpu_avx2::get() {
                return Lanes::Avx2;
            }
        }
        #[cfg(target_arch = "aarch64")]
        {
            if cpu_sm3::get() {
                return Lanes::Serial;
            }
            if cfg!(target_feature = "neon") {
                return Lanes::Neon;
            }
        }
        Lanes::Serial
    }
}
