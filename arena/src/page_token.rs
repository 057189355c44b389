//! The page tokens of ListMatches: an opaque string naming the last match of a page by its
//! place in the list (start time, id), so that the next page starts right after it
//! (keyset paging; see [`crate::store::Store::list_matches`]).
//!
//! A token is `m1:<started_at_ms>:<id>` in unpadded URL-safe base64. Clients pass it back
//! unchanged; the layout may change (the `m1` names this one).

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use crate::store::MatchCursor;

/// The layout tag in front of every token.
const TAG: &str = "m1";

/// The longest match id a token may carry (ids are at most 64 characters, as GetMatchLog
/// checks).
const MAX_ID_BYTES: usize = 64;

/// The longest token accepted: the tag, a 20-digit time, the id, two colons, in base64.
pub const MAX_TOKEN_CHARS: usize = (TAG.len() + 20 + MAX_ID_BYTES + 2).div_ceil(3) * 4;

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
    /// Not a token of this server's layout.
    #[error(
        "page_token {token:?} is not one this server gave ({why}): pass next_page_token \
         unchanged, or an empty page_token for the first page"
    )]
    Foreign {
        /// The token as given.
        token: String,
        /// What is wrong with it.
        why: &'static str,
    },
}

/// The token for the page that follows `cursor`.
pub fn encode(cursor: &MatchCursor) -> String {
    URL_SAFE_NO_PAD.encode(format!("{TAG}:{}:{}", cursor.started_at_ms, cursor.id))
}

/// The position a token names: `None` for the empty token (the first page).
pub fn decode(token: &str) -> Result<Option<MatchCursor>, PageTokenError> {
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
        token: token.to_owned(),
        why,
    };
    let bytes = URL_SAFE_NO_PAD
        .decode(token)
        .map_err(|_| foreign("not unpadded URL-safe base64"))?;
    let text = String::from_utf8(bytes).map_err(|_| foreign("not UTF-8 inside"))?;
    let mut parts = text.splitn(3, ':');
    if parts.next() != Some(TAG) {
        return Err(foreign("unknown layout"));
    }
    let started_at_ms = parts
        .next()
        .and_then(|ms| ms.parse::<i64>().ok())
        .filter(|ms| *ms >= 0)
        .ok_or_else(|| foreign("no start time"))?;
    let id = parts.next().unwrap_or("");
    if id.is_empty() || id.len() > MAX_ID_BYTES {
        return Err(foreign("no match id of 1..=64 bytes"));
    }
    Ok(Some(MatchCursor {
        started_at_ms,
        id: id.to_owned(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_names_the_position_it_was_made_from() {
        let cursor = MatchCursor {
            started_at_ms: 1_764_000_000_123,
            id: "m-00af:with:colons".to_owned(),
        };
        let token = encode(&cursor);
        assert!(token.len() <= MAX_TOKEN_CHARS);
        assert_eq!(decode(&token), Ok(Some(cursor)));
        assert_eq!(decode(""), Ok(None));
        let longest = MatchCursor {
            started_at_ms: i64::MAX,
            id: "x".repeat(MAX_ID_BYTES),
        };
        assert_eq!(decode(&encode(&longest)), Ok(Some(longest)));
    }

    #[test]
    fn foreign_tokens_are_refused_with_a_reason() {
        let cases = [
            ("%%%", "not unpadded URL-safe base64"),
            (&URL_SAFE_NO_PAD.encode("m2:1:a"), "unknown layout"),
            (&URL_SAFE_NO_PAD.encode("m1:x:a"), "no start time"),
            (&URL_SAFE_NO_PAD.encode("m1:-5:a"), "no start time"),
            (
                &URL_SAFE_NO_PAD.encode("m1:5:"),
                "no match id of 1..=64 bytes",
            ),
            (
                &URL_SAFE_NO_PAD.encode("m1:5"),
                "no match id of 1..=64 bytes",
            ),
            (&URL_SAFE_NO_PAD.encode([0xff, 0xfe]), "not UTF-8 inside"),
        ];
        for (token, why) in cases {
            let error = decode(token).unwrap_err();
            assert_eq!(
                error,
                PageTokenError::Foreign {
                    token: token.to_owned(),
                    why
                },
                "{token}"
            );
            assert!(error.to_string().contains("pass next_page_token unchanged"));
        }
        // An offset token of the old layout.
        assert!(matches!(decode("100"), Err(PageTokenError::Foreign { .. })));
        let long = "A".repeat(MAX_TOKEN_CHARS + 1);
        assert!(matches!(decode(&long), Err(PageTokenError::TooLong { .. })));
    }
}
