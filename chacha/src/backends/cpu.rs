//! The x86 core families whose tuning differs (read once per process), and
//! the choices the backends make by them. A leaf: the dispatch in
//! `backends` and the backends below it all read it.

/// The core families whose tuning differs, as CPUID tells them.
#[derive(Copy, Clone, PartialEq, Eq)]
#[repr(u8)]
enum Core {
    /// AMD family 19h (Zen 3 and Zen 4; only Zen 4 has AVX-512).
    Amd19h = 1,
    /// AMD family 1Ah and later (Zen 5).
    Amd1Ah = 2,
    Other = 3,
}

/// The core family, read once per process: CPUID traps to the hypervisor
/// in a VM (tens of microseconds), and XChaCha users build a cipher per
/// message.
fn core_family() -> Core {
    use core::sync::atomic::{AtomicU8, Ordering};
    // 0: not read yet, else the `Core` value.
    static CORE: AtomicU8 = AtomicU8::new(0);
    match CORE.load(Ordering::Relaxed) {
        1 => return Core::Amd19h,
        2 => return Core::Amd1Ah,
        3 => return Core::Other,
        _ => {}
    }
    #[allow(unused_unsafe)]
    // SAFETY: CPUID exists on every x86_64 CPU; leaf 0 gives the vendor
    // and the highest leaf, leaf 1 the family.
    let (vendor_amd, family) = unsafe {
        use core::arch::x86_64::__cpuid;
        let l0 = __cpuid(0);
        let amd = (l0.ebx, l0.edx, l0.ecx) == (0x6874_7541, 0x6974_6e65, 0x444d_4163);
        let eax = if l0.eax >= 1 { __cpuid(1).eax } else { 0 };
        (amd, ((eax >> 8) & 0xf) + ((eax >> 20) & 0xff))
    };
    let core = match (vendor_amd, family) {
        (true, 0x19) => Core::Amd19h,
        (true, f) if f >= 0x1a => Core::Amd1Ah,
        _ => Core::Other,
    };
    CORE.store(core as u8, Ordering::Relaxed);
    core
}

/// Whether this CPU executes 512-bit vector operations as two 256-bit
/// halves: AMD family 19h (Zen 4). There the two-ymm-set kernel of
/// [`super::Backend::Avx512`] runs the rounds faster than one zmm set, which
/// cannot hide the 2-cycle rotations; on full-width cores (Intel, Zen 5)
/// the zmm set does twice the work per port slot.
pub(crate) fn splits_512_bit_ops() -> bool {
    core_family() == Core::Amd19h
}

/// Whether a lone block (a message of up to 64 bytes, a partial block's
/// refill) and HChaCha run faster as scalar code than in vector registers:
/// AMD family 1Ah (Zen 5). Both are one latency-bound chain of 1-cycle
/// steps in general-purpose registers, and Zen 5 has six integer ALUs for
/// the four quarter rounds' parallel steps, but takes 2 cycles for the
/// vector additions and XORs: HChaCha20 there took 174 TSC cycles as
/// scalar code against 307-363 in xmm registers. On Zen 4 (four ALUs,
/// 1-cycle vector steps) the scalar code was the slower (NOTES.md).
pub(crate) fn lone_block_scalar() -> bool {
    core_family() == Core::Amd1Ah
}

/// Whether `avx` runs 10-15 blocks left after its 16-block passes (9-15
/// when a partial block's keystream comes from a spare lane) as one more
/// 16-block pass, partly wasted, rather than an 8-block pass and a shorter
/// pass or row chain after it: AMD family 1Ah (Zen 5), where those
/// shorter chains are latency-bound at two cycles a vector step while the
/// 16-block pass is bound by the vector ports (NOTES.md).
pub(crate) fn tail_in_pass16() -> bool {
    core_family() == Core::Amd1Ah
}
