//! `bookstore-codec`: the JSON serializers behind one small interface.
//!
//! A stack names its serializer by type ([`SerdeJson`], [`SimdJson`], [`SonicRs`]); the
//! request handlers, written once in `bookstore-app`, parse request bodies and write
//! response bodies through [`Codec`], so a stack's JSON work is done by its own serializer
//! and nothing else. Each serializer is behind a cargo feature: a server compiles only its
//! own.
//!
//! All three write byte-identical JSON for every contract type (tested): compact, fields in
//! declaration order, non-ASCII unescaped. Timestamps and dates format themselves
//! (`bookstore_domain::datetime`), so no serializer formats them differently.
//!
//! `cargo bench -p bookstore-codec --all-features` compares the three on the contract's
//! payloads.

use serde::Serialize;
use serde::de::DeserializeOwned;

/// A JSON serializer.
pub trait Codec: Send + Sync + 'static {
    /// The serializer tag of small-json (`"serde_json"`, `"simd-json"`, `"sonic-rs"`).
    const NAME: &'static str;

    /// Writes `value` as compact JSON.
    fn encode<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, CodecError>;

    /// Reads `body` as JSON into `T`.
    fn decode<T: DeserializeOwned>(body: &[u8]) -> Result<T, CodecError>;
}

/// A serializer's error, as its message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CodecError(pub String);

/// `serde_json`, the reference serializer.
#[cfg(feature = "serde_json")]
#[derive(Debug, Clone, Copy, Default)]
pub struct SerdeJson;

#[cfg(feature = "serde_json")]
impl Codec for SerdeJson {
    const NAME: &'static str = "serde_json";

    fn encode<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, CodecError> {
        serde_json::to_vec(value).map_err(|e| CodecError(e.to_string()))
    }

    fn decode<T: DeserializeOwned>(body: &[u8]) -> Result<T, CodecError> {
        serde_json::from_slice(body).map_err(|e| CodecError(e.to_string()))
    }
}

/// `simd-json`: SIMD parsing (AVX2, which `.cargo/config.toml`'s `x86-64-v3` target turns
/// on) through its serde interface.
///
/// It parses in place, so the body is first copied into a buffer that, like simd-json's
/// own working buffers, is kept per thread and reused: no allocation per request beyond
/// what the parsed value itself owns.
#[cfg(feature = "simd-json")]
#[derive(Debug, Clone, Copy, Default)]
pub struct SimdJson;

#[cfg(feature = "simd-json")]
impl Codec for SimdJson {
    const NAME: &'static str = "simd-json";

    fn encode<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, CodecError> {
        simd_json::serde::to_vec(value).map_err(|e| CodecError(e.to_string()))
    }

    fn decode<T: DeserializeOwned>(body: &[u8]) -> Result<T, CodecError> {
        use std::cell::RefCell;
        thread_local! {
            static SCRATCH: RefCell<(Vec<u8>, simd_json::Buffers)> =
                RefCell::new((Vec::new(), simd_json::Buffers::default()));
        }
        SCRATCH.with_borrow_mut(|(copy, buffers)| {
            copy.clear();
            copy.extend_from_slice(body);
            simd_json::serde::from_slice_with_buffers(copy, buffers)
                .map_err(|e| CodecError(e.to_string()))
        })
    }
}

/// `sonic-rs`: SIMD parsing and serialization, selected at compile time (needs AVX2 and
/// PCLMULQDQ enabled, see `.cargo/config.toml`).
#[cfg(feature = "sonic-rs")]
#[derive(Debug, Clone, Copy, Default)]
pub struct SonicRs;

#[cfg(feature = "sonic-rs")]
impl Codec for SonicRs {
    const NAME: &'static str = "sonic-rs";

    fn encode<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, CodecError> {
        sonic_rs::to_vec(value).map_err(|e| CodecError(e.to_string()))
    }

    fn decode<T: DeserializeOwned>(body: &[u8]) -> Result<T, CodecError> {
        sonic_rs::from_slice(body).map_err(|e| CodecError(e.to_string()))
    }
}

/// Whether this build uses sonic-rs's SIMD paths (they are chosen at compile time).
pub const SONIC_RS_SIMD: bool =
    cfg!(all(target_arch = "x86_64", target_feature = "avx2", target_feature = "pclmulqdq"));
