//! [`StateSeal`]: the `requestState` of input-required results (SEP-2322), sealed so that a
//! client can neither change nor move it unnoticed.
//!
//! The state carries the answers of earlier rounds (the client's own answers, so nothing in
//! it is secret; it is signed, not encrypted). It is sealed with rmcp's
//! [`RequestStateCodec`] (HMAC-SHA256, feature `request-state`), bound as associated data to
//! the request it belongs to (method, tool or prompt name, arguments in a canonical form,
//! and the host's meta such as the authenticated user), and expires after [`STATE_TTL`]. A
//! state that was changed, belongs to another request or principal, or has expired fails
//! the request with `-32602`.
//!
//! Every replica behind a load balancer must seal with the same key
//! ([`super::ServerOptions::request_state_key`]); without one, each server draws its own.

use std::collections::BTreeMap;
use std::time::Duration;

use rmcp::ErrorData as McpError;
use rmcp::model::{RequestStateCodec, RequestStateError, SealOptions};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::model::JsonObject;

/// How long a sealed state stays valid: 15 minutes (a person answering a form included).
pub const STATE_TTL: Duration = Duration::from_secs(15 * 60);

/// The sealed payload, and what a state opens to.
#[derive(Serialize, Deserialize, Default, Debug)]
pub(crate) struct Sealed {
    /// Answers of earlier rounds, by input key.
    #[serde(rename = "a", default)]
    pub(crate) answers: BTreeMap<String, Value>,
    /// How many rounds came before (0 for a request without a state).
    #[serde(rename = "r", default)]
    pub(crate) rounds: u32,
}

/// Seals and opens request states with one key.
pub(crate) struct StateSeal {
    codec: RequestStateCodec,
}

/// What a request state is bound to: the request it was issued for, as associated data.
pub(crate) struct Binding {
    /// `tools/call` or `prompts/get` (named in errors).
    method: &'static str,
    ad: Vec<u8>,
}

impl Binding {
    /// The binding of a `method` request (`tools/call`, `prompts/get`) for `name` with
    /// `arguments`, from a host whose meta is `host` (the authenticated principal, say).
    ///
    /// The associated data has every part on its own line, JSON in canonical form (keys
    /// sorted at every level), so a client re-ordering its arguments still matches.
    pub(crate) fn new(
        method: &'static str,
        name: &str,
        arguments: &JsonObject,
        host: Option<&JsonObject>,
    ) -> Binding {
        let mut ad = Vec::with_capacity(64);
        ad.extend_from_slice(method.as_bytes());
        ad.push(b'\n');
        ad.extend_from_slice(serde_json::to_string(name).unwrap_or_default().as_bytes());
        ad.push(b'\n');
        canonical_object(arguments, &mut ad);
        ad.push(b'\n');
        if let Some(host) = host {
            canonical_object(host, &mut ad);
        }
        Binding { method, ad }
    }
}

fn canonical_object(map: &JsonObject, out: &mut Vec<u8>) {
    let mut keys: Vec<&String> = map.keys().collect();
    keys.sort();
    out.push(b'{');
    for (i, key) in keys.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(serde_json::to_string(key).unwrap_or_default().as_bytes());
        out.push(b':');
        canonical(&map[key], out);
    }
    out.push(b'}');
}

/// `value` as JSON with object keys sorted at every level.
fn canonical(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Object(map) => canonical_object(map, out),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                canonical(item, out);
            }
            out.push(b']');
        }
        scalar => out.extend_from_slice(scalar.to_string().as_bytes()),
    }
}

impl StateSeal {
    /// A seal with `key` (at least 32 bytes), or a fresh random key when `None`.
    ///
    /// # Panics
    ///
    /// When `key` is shorter than 32 bytes, or no random key can be drawn from the system.
    #[track_caller]
    pub(crate) fn new(key: Option<&[u8]>) -> StateSeal {
        let key = match key {
            Some(key) => key.to_vec(),
            None => {
                let mut key = vec![0u8; 32];
                getrandom::fill(&mut key).expect("charly: no random bytes for the request-state key");
                key
            }
        };
        match RequestStateCodec::try_new(key) {
            Ok(codec) => StateSeal { codec },
            Err(e) => panic!("charly: the request-state key is not usable: {e}"),
        }
    }

    /// The state for the next round of `binding`, carrying `answers` after `rounds` rounds.
    pub(crate) fn seal(&self, binding: &Binding, answers: BTreeMap<String, Value>, rounds: u32) -> String {
        let options = SealOptions::new().associated_data(&binding.ad).ttl(STATE_TTL);
        self.codec
            .seal_json_with(&Sealed { answers, rounds }, &options)
            .expect("a map of JSON values serialises")
    }

    /// The answers of earlier rounds in `state`, and how many rounds they were (none without
    /// a state).
    ///
    /// # Errors
    ///
    /// `-32602` when the state was changed, was issued for another request or principal, or
    /// has expired; the message says which and what to do.
    pub(crate) fn open(&self, binding: &Binding, state: Option<&str>) -> Result<Sealed, McpError> {
        let Some(state) = state else { return Ok(Sealed::default()) };
        match self.codec.open_json_with::<Sealed>(state, &binding.ad) {
            Ok(sealed) => Ok(sealed),
            Err(RequestStateError::Expired) => Err(McpError::invalid_params(
                format!(
                    "requestState has expired (it is valid for {} minutes): send `{}` again \
                     without requestState and inputResponses",
                    STATE_TTL.as_secs() / 60,
                    binding.method
                ),
                None,
            )),
            Err(e) => {
                // rmcp's own text for a failed seal says what this message says already.
                let why = e.to_string();
                let why =
                    if why.contains("integrity verification") { String::new() } else { format!(" ({why})") };
                Err(McpError::invalid_params(
                    format!(
                        "requestState failed integrity verification{why}: it was changed, or was \
                         issued for another request; send `{}` again without requestState",
                        binding.method
                    ),
                    None,
                ))
            }
        }
    }
}

impl std::fmt::Debug for StateSeal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StateSeal(..)")
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn args(value: Value) -> JsonObject {
        value.as_object().cloned().unwrap()
    }

    #[test]
    fn a_state_opens_for_its_own_request_only() {
        let seal = StateSeal::new(None);
        let a = args(json!({"x": 1, "y": {"b": 2, "a": 1}}));
        let binding = Binding::new("tools/call", "t", &a, None);
        let state = seal.seal(&binding, BTreeMap::from([("k".to_owned(), json!({"action": "accept"}))]), 1);
        let opened = seal.open(&binding, Some(&state)).unwrap();
        assert_eq!((opened.answers["k"]["action"].as_str(), opened.rounds), (Some("accept"), 1));

        // The same arguments in another order still match.
        let reordered = args(json!({"y": {"a": 1, "b": 2}, "x": 1}));
        assert!(seal.open(&Binding::new("tools/call", "t", &reordered, None), Some(&state)).is_ok());

        let mallory = args(json!({"user": "mallory"}));
        for other in [
            Binding::new("tools/call", "u", &a, None),
            Binding::new("prompts/get", "t", &a, None),
            Binding::new("tools/call", "t", &args(json!({"x": 2})), None),
            Binding::new("tools/call", "t", &a, Some(&mallory)),
        ] {
            let err = seal.open(&other, Some(&state)).unwrap_err();
            assert_eq!(err.code, rmcp::model::ErrorCode::INVALID_PARAMS);
            assert_eq!(
                err.message.matches("integrity verification").count(),
                1,
                "said once: {}",
                err.message
            );
        }
        let tampered = format!("{state}-TAMPERED");
        assert!(seal.open(&binding, Some(&tampered)).unwrap_err().message.contains("integrity"));
        assert!(StateSeal::new(None).open(&binding, Some(&state)).is_err(), "another key");
        assert!(seal.open(&binding, None).unwrap().answers.is_empty());
    }
}
