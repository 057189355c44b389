//! The bot token and the interceptor that puts it on every call.

use std::fmt;

use tonic::metadata::{Ascii, MetadataValue};
use tonic::service::Interceptor;
use tonic::{Request, Status};

use crate::error::BotError;

/// A bot token, as `knobel bot add NAME` prints it. A secret: its `Debug` and `Display`
/// show `***`, never the token, so it cannot end up in a log by accident.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl Token {
    /// Wraps a token. Surrounding whitespace (a trailing newline from a file or an
    /// environment variable) is removed.
    pub fn new(token: impl Into<String>) -> Token {
        let token = token.into();
        Token(token.trim().to_owned())
    }

    /// The token itself. Handle with care: do not log it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(***)")
    }
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

impl From<&str> for Token {
    fn from(token: &str) -> Token {
        Token::new(token)
    }
}

impl From<String> for Token {
    fn from(token: String) -> Token {
        Token::new(token)
    }
}

/// A tonic interceptor that adds `authorization: Bearer <token>` to every request. The
/// header value is marked sensitive (kept out of debug output and HPACK tables).
#[derive(Clone)]
pub struct BearerAuth {
    header: MetadataValue<Ascii>,
}

impl BearerAuth {
    /// The interceptor for `token`. Fails if the token is empty or holds characters that
    /// cannot go into a header (the error does not repeat the token).
    pub fn new(token: &Token) -> Result<BearerAuth, BotError> {
        let token = token.expose();
        if token.is_empty() || !token.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(BotError::InvalidToken);
        }
        let mut header: MetadataValue<Ascii> = format!("Bearer {token}")
            .parse()
            .map_err(|_| BotError::InvalidToken)?;
        header.set_sensitive(true);
        Ok(BearerAuth { header })
    }
}

impl fmt::Debug for BearerAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("BearerAuth(***)")
    }
}

impl Interceptor for BearerAuth {
    fn call(&mut self, mut request: Request<()>) -> Result<Request<()>, Status> {
        request
            .metadata_mut()
            .insert("authorization", self.header.clone());
        Ok(request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_never_shows_in_debug_or_display() {
        let token = Token::new(" knb_secret\n");
        assert_eq!(token.expose(), "knb_secret");
        assert!(!format!("{token:?} {token}").contains("secret"));
        let auth = BearerAuth::new(&token).unwrap();
        assert!(!format!("{auth:?}").contains("secret"));
    }

    #[test]
    fn the_interceptor_adds_the_bearer_header() {
        let mut auth = BearerAuth::new(&Token::new("knb_abc")).unwrap();
        let request = auth.call(Request::new(())).unwrap();
        let value = request.metadata().get("authorization").unwrap();
        assert_eq!(value.to_str().unwrap(), "Bearer knb_abc");
    }

    #[test]
    fn bad_tokens_are_refused_without_repeating_them() {
        for bad in ["", "has space", "tab\there", "ünïcode"] {
            let error = BearerAuth::new(&Token::new(bad)).unwrap_err();
            assert!(matches!(error, BotError::InvalidToken));
        }
        // Inner whitespace stays (only the ends are trimmed) and is refused.
        assert!(BearerAuth::new(&Token::new("a b")).is_err());
    }
}
