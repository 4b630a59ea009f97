//! Trait impls shared by the three MAC types.

/// Implements `Update`, `OutputSizeUser`, `MacMarker`, `Reset`,
/// `FixedOutput`, `FixedOutputReset`, `Clone`, `Debug`, `AlgorithmName`,
/// and (feature `zeroize`) `Drop` + `ZeroizeOnDrop` for a MAC type with
/// fields `cipher: C`, `chain: Chain`, the listed subkey fields, and an
/// inherent `fn tag(&mut self) -> [u8; 16]` that finalizes.
macro_rules! impl_mac_traits {
    ($name:ident, $label:literal, [$($key:ident),*]) => {
        impl<C: BlockCipherEncrypt<BlockSize = U16>> digest::Update for $name<C> {
            #[inline]
            fn update(&mut self, data: &[u8]) {
                self.chain.update(&self.cipher, data);
            }
        }

        impl<C: BlockCipherEncrypt<BlockSize = U16>> digest::OutputSizeUser for $name<C> {
            type OutputSize = U16;
        }

        impl<C: BlockCipherEncrypt<BlockSize = U16>> digest::MacMarker for $name<C> {}

        impl<C: BlockCipherEncrypt<BlockSize = U16>> digest::Reset for $name<C> {
            #[inline]
            fn reset(&mut self) {
                self.chain.reset();
            }
        }

        impl<C: BlockCipherEncrypt<BlockSize = U16>> digest::FixedOutput for $name<C> {
            #[inline]
            fn finalize_into(mut self, out: &mut digest::Output<Self>) {
                out.0 = self.tag();
            }
        }

        impl<C: BlockCipherEncrypt<BlockSize = U16>> digest::FixedOutputReset for $name<C> {
            #[inline]
            fn finalize_into_reset(&mut self, out: &mut digest::Output<Self>) {
                out.0 = self.tag();
                self.chain.reset();
            }
        }

        impl<C: BlockCipherEncrypt<BlockSize = U16> + Clone> Clone for $name<C> {
            fn clone(&self) -> Self {
                Self {
                    cipher: self.cipher.clone(),
                    $($key: self.$key,)*
                    chain: self.chain.clone(),
                }
            }
        }

        /// Prints no key material and no message state.
        impl<C: BlockCipherEncrypt<BlockSize = U16>> core::fmt::Debug for $name<C> {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str(concat!($label, " { .. }"))
            }
        }

        impl<C: BlockCipherEncrypt<BlockSize = U16> + cipher::AlgorithmName>
            cipher::AlgorithmName for $name<C>
        {
            fn write_alg_name(f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str(concat!($label, "<"))?;
                C::write_alg_name(f)?;
                f.write_str(">")
            }
        }

        #[cfg(feature = "zeroize")]
        impl<C: BlockCipherEncrypt<BlockSize = U16>> Drop for $name<C> {
            fn drop(&mut self) {
                self.chain.wipe();
                $(zeroize::Zeroize::zeroize(&mut self.$key);)*
            }
        }

        /// Only when the cipher wipes its own key schedule.
        #[cfg(feature = "zeroize")]
        impl<C: BlockCipherEncrypt<BlockSize = U16> + zeroize::ZeroizeOnDrop>
            zeroize::ZeroizeOnDrop for $name<C>
        {
        }
    };
}

pub(crate) use impl_mac_traits;
