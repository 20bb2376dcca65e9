//! [`BearerToken`]: the token an HTTP endpoint requires (`HttpOptions::bearer_token`).

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use http::HeaderValue;
use subtle::ConstantTimeEq as _;

use super::stdio::ServeError;

/// A bearer token the HTTP endpoint requires. `Debug` never shows it.
#[derive(Clone)]
pub struct BearerToken(Arc<str>);

impl BearerToken {
    /// This token, surrounding whitespace trimmed.
    ///
    /// # Errors
    ///
    /// [`ServeError::Token`] when it is empty, or holds a character other than visible ASCII
    /// and spaces (all an `Authorization` header can carry, RFC 9110 section 5.5), which no
    /// request could ever match.
    pub fn new(token: impl Into<String>) -> Result<BearerToken, ServeError> {
        BearerToken::checked(&token.into())
            .map_err(|why| ServeError::Token(format!("the bearer token {why}")))
    }

    /// The token in environment variable `var`.
    ///
    /// # Errors
    ///
    /// [`ServeError::Token`] naming the variable when it is unset, not UTF-8, or its value is
    /// not a token [`BearerToken::new`] accepts.
    pub fn from_env(var: &str) -> Result<BearerToken, ServeError> {
        let value =
            std::env::var(var).map_err(|e| ServeError::Token(format!("bearer token variable {var}: {e}")))?;
        BearerToken::checked(&value)
            .map_err(|why| ServeError::Token(format!("bearer token variable {var} {why}")))
    }

    /// The token in a file (surrounding whitespace trimmed).
    ///
    /// # Errors
    ///
    /// [`ServeError::Token`] naming the file when it cannot be read, or its content is not a
    /// token [`BearerToken::new`] accepts.
    pub fn from_file(path: &Path) -> Result<BearerToken, ServeError> {
        let value = std::fs::read_to_string(path)
            .map_err(|e| ServeError::Token(format!("bearer token file {}: {e}", path.display())))?;
        BearerToken::checked(&value)
            .map_err(|why| ServeError::Token(format!("bearer token file {} {why}", path.display())))
    }

    /// `token` trimmed, or why it cannot be one (completing "the bearer token ...").
    fn checked(token: &str) -> Result<BearerToken, String> {
        let token = token.trim();
        if token.is_empty() {
            return Err("is empty".into());
        }
        match token.chars().find(|&c| c != ' ' && !c.is_ascii_graphic()) {
            Some(c) => {
                Err(format!("holds {c:?}; an Authorization header carries only visible ASCII and spaces"))
            }
            None => Ok(BearerToken(token.into())),
        }
    }

    /// Whether an `Authorization` header value carries this token (constant-time compare).
    pub(super) fn accepts(&self, header: Option<&HeaderValue>) -> bool {
        let Some(value) = header.and_then(|h| h.to_str().ok()) else { return false };
        let Some((scheme, token)) = value.split_once(' ') else { return false };
        scheme.eq_ignore_ascii_case("bearer") && bool::from(token.trim().as_bytes().ct_eq(self.0.as_bytes()))
    }
}

impl fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("BearerToken(..)")
    }
}
