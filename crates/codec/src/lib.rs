//! `bookstore-codec`: the JSON serializers behind one small interface.
//!
//! A stack names its serializer by type (`SerdeJson`, …); the request handlers, written
//! once in `bookstore-app`, parse request bodies and write response bodies through
//! [`Codec`], so a stack's JSON work is done by its own serializer and nothing else.
//! Each serializer is behind a cargo feature: a server compiles only its own.
//!
//! Timestamps and dates format themselves (`bookstore_domain::datetime`), so every codec
//! writes them identically.

use serde::Serialize;
use serde::de::DeserializeOwned;

/// A JSON serializer.
pub trait Codec: Send + Sync + 'static {
    /// The serializer tag of small-json (`"serde_json"`, …).
    const NAME: &'static str;

    /// Writes `value` as compact JSON.
    fn encode<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, CodecError>;

    /// Reads `body` as JSON into `T`.
    fn decode<T: DeserializeOwned>(body: &[u8]) -> Result<T, CodecError>;
}

/// A serializer's error, as its message (which names the field where it can).
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
