//! The page tokens of ListMatches (and the web's match lists): an opaque string naming the
//! last match of a page by its place in the list (start time, id), so that the next page
//! starts right after it (keyset paging; see [`crate::store::Store::list_matches`]).
//!
//! A token is `m2:<started_at_ms>:<mac>:<id>` in unpadded URL-safe base64, where `<mac>` is
//! 32 hex digits: the first 16 bytes of HMAC-SHA-256, keyed with the arenas' page-token key
//! (one per database, [`crate::store::Store::page_token_key`], so every arena on it
//! accepts the others' tokens), over `m2:<started_at_ms>:<id>`. A token the arenas did not
//! give, or one altered, is refused, as the proto promises. Clients pass it back unchanged;
//! the layout may change (the `m2` names this one).

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;
use subtle::ConstantTimeEq;

use crate::store::MatchCursor;

/// The layout tag in front of every token.
const TAG: &str = "m2";

/// The longest match id a token may carry (ids are at most 64 characters, as GetMatchLog
/// checks).
const MAX_ID_BYTES: usize = 64;

/// Hex digits of a token's MAC.
const MAC_HEX: usize = 32;

/// The longest token accepted: the tag, a 20-digit time, the MAC, the id, three colons, in
/// base64.
pub const MAX_TOKEN_CHARS: usize = (TAG.len() + 20 + MAC_HEX + MAX_ID_BYTES + 3).div_ceil(3) * 4;

/// Why a page token was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PageTokenError {
    /// Longer than any token this server gives.
    #[error(
        "page_token is {len} characters; tokens this server gives are at most {max}: pass \
         next_page_token unchanged, or an empty page_token for the first page"
    )]
    TooLong {
        /// Its length.
        len: usize,
        /// [`MAX_TOKEN_CHARS`].
        max: usize,
    },
    /// Not a token this server gave.
    #[error(
        "page_token {token} is not one this server gave ({why}): pass next_page_token \
         unchanged, or an empty page_token for the first page"
    )]
    Foreign {
        /// The token as given, quoted.
        token: String,
        /// What is wrong with it.
        why: &'static str,
    },
}

/// Makes and checks page tokens with the arenas' key.
#[derive(Clone)]
pub struct PageTokens {
    key: [u8; 32],
}

impl std::fmt::Debug for PageTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PageTokens(..)")
    }
}

impl PageTokens {
    /// Tokens keyed with `key`.
    pub fn new(key: [u8; 32]) -> PageTokens {
        PageTokens { key }
    }

    /// The MAC of a token's `<started_at_ms>` and `<id>`, as hex digits.
    fn mac(&self, started_at_ms: i64, id: &str) -> String {
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.key)
            .expect("HMAC takes a key of any length");
        mac.update(format!("{TAG}:{started_at_ms}:{id}").as_bytes());
        hex::encode(&mac.finalize().into_bytes()[..MAC_HEX / 2])
    }

    /// The token for the page that follows `cursor`.
    pub fn encode(&self, cursor: &MatchCursor) -> String {
        let mac = self.mac(cursor.started_at_ms, &cursor.id);
        URL_SAFE_NO_PAD.encode(format!(
            "{TAG}:{}:{mac}:{}",
            cursor.started_at_ms, cursor.id
        ))
    }

    /// The position a token names: `None` for the empty token (the first page).
    pub fn decode(&self, token: &str) -> Result<Option<MatchCursor>, PageTokenError> {
        if token.is_empty() {
            return Ok(None);
        }
        if token.len() > MAX_TOKEN_CHARS {
            return Err(PageTokenError::TooLong {
                len: token.len(),
                max: MAX_TOKEN_CHARS,
            });
        }
        let foreign = |why| PageTokenError::Foreign {
            token: knobel_engine::quoted(token),
            why,
        };
        let bytes = URL_SAFE_NO_PAD
            .decode(token)
            .map_err(|_| foreign("not unpadded URL-safe base64"))?;
        let text = String::from_utf8(bytes).map_err(|_| foreign("not UTF-8 inside"))?;
        let mut parts = text.splitn(4, ':');
        if parts.next() != Some(TAG) {
            return Err(foreign("unknown layout"));
        }
        let started_at_ms = parts
            .next()
            .and_then(|ms| ms.parse::<i64>().ok())
            .filter(|ms| *ms >= 0)
            .ok_or_else(|| foreign("no start time"))?;
        let mac = parts.next().unwrap_or("");
        let id = parts.next().unwrap_or("");
        if id.is_empty() || id.len() > MAX_ID_BYTES {
            return Err(foreign("no match id of 1..=64 bytes"));
        }
        let expected = self.mac(started_at_ms, id);
        if !bool::from(expected.as_bytes().ct_eq(mac.as_bytes())) {
            return Err(foreign("its signature does not match: it was altered"));
        }
        Ok(Some(MatchCursor {
            started_at_ms,
            id: id.to_owned(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens() -> PageTokens {
        PageTokens::new([7; 32])
    }

    #[test]
    fn a_token_names_the_position_it_was_made_from() {
        let cursor = MatchCursor {
            started_at_ms: 1_764_000_000_123,
            id: "m-00af:with:colons".to_owned(),
        };
        let token = tokens().encode(&cursor);
        assert!(token.len() <= MAX_TOKEN_CHARS);
        assert_eq!(tokens().decode(&token), Ok(Some(cursor)));
        assert_eq!(tokens().decode(""), Ok(None));
        let longest = MatchCursor {
            started_at_ms: i64::MAX,
            id: "x".repeat(MAX_ID_BYTES),
        };
        let token = tokens().encode(&longest);
        assert!(token.len() <= MAX_TOKEN_CHARS);
        assert_eq!(tokens().decode(&token), Ok(Some(longest)));
    }

    #[test]
    fn tampered_and_foreign_tokens_are_refused_with_a_reason() {
        let made = |text: &str| URL_SAFE_NO_PAD.encode(text);
        let honest = tokens().encode(&MatchCursor {
            started_at_ms: 5,
            id: "abc".to_owned(),
        });
        let inside = String::from_utf8(URL_SAFE_NO_PAD.decode(&honest).unwrap()).unwrap();
        let mac = inside.split(':').nth(2).unwrap().to_owned();
        let cases = [
            ("%%%".to_owned(), "not unpadded URL-safe base64"),
            (made("m1:1:a"), "unknown layout"),
            (made("m2:x:a"), "no start time"),
            (made("m2:-5:a"), "no start time"),
            (made("m2:5:"), "no match id of 1..=64 bytes"),
            (made("m2:5"), "no match id of 1..=64 bytes"),
            (URL_SAFE_NO_PAD.encode([0xff, 0xfe]), "not UTF-8 inside"),
            // Still decodes, but names another position than the one signed.
            (
                made(&format!("m2:6:{mac}:abc")),
                "its signature does not match: it was altered",
            ),
            (
                made(&format!("m2:5:{mac}:abd")),
                "its signature does not match: it was altered",
            ),
            (
                made("m2:5:00000000000000000000000000000000:abc"),
                "its signature does not match: it was altered",
            ),
        ];
        for (token, why) in cases {
            let error = tokens().decode(&token).unwrap_err();
            assert_eq!(
                error,
                PageTokenError::Foreign {
                    token: knobel_engine::quoted(&token),
                    why
                },
                "{token}"
            );
            assert!(error.to_string().contains("pass next_page_token unchanged"));
        }
        // Another key (another database's arenas) did not give it.
        let other = PageTokens::new([8; 32]);
        assert!(matches!(
            other.decode(&honest),
            Err(PageTokenError::Foreign { .. })
        ));
        // An offset token of the old layout.
        assert!(matches!(
            tokens().decode("100"),
            Err(PageTokenError::Foreign { .. })
        ));
        let long = "A".repeat(MAX_TOKEN_CHARS + 1);
        assert!(matches!(
            tokens().decode(&long),
            Err(PageTokenError::TooLong { .. })
        ));
    }
}
