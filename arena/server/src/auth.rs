//! Bot and admin tokens: making them, hashing them for the store, reading them from an
//! `Authorization: Bearer <token>` header, and checking an admin token.
//!
//! A token is [`TOKEN_PREFIX`] followed by 64 lowercase hex digits: 256 bits from the
//! operating system's random number generator. The arena shows a bot's token once, when the
//! bot is registered, and keeps only its SHA-256 hash ([`hash_token`]); a bot is then
//! recognised by looking its token's hash up in the store.

use std::fmt;

use rand::TryRng;
use rand::rngs::SysRng;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// What every token made by [`generate_token`] starts with, so that a leaked token is easy to
/// recognise (and to search for in logs and repositories).
pub const TOKEN_PREFIX: &str = "knb_";

/// The longest token [`bearer_token`] accepts, in bytes.
pub const MAX_TOKEN_LEN: usize = 256;

/// The longest bot name accepted, in bytes (the one name rule: [`knobel_proto::names`]).
pub const MAX_BOT_NAME_LEN: usize = knobel_proto::names::MAX_NAME_BYTES;

/// How many random bytes a token carries (256 bits).
const TOKEN_BYTES: usize = 32;

/// A new random token: [`TOKEN_PREFIX`] and 64 lowercase hex digits (256 bits from the
/// operating system's random number generator).
///
/// # Panics
///
/// If the operating system cannot provide random bytes, which leaves no safe way to go on.
pub fn generate_token() -> String {
    let mut bytes = [0u8; TOKEN_BYTES];
    SysRng
        .try_fill_bytes(&mut bytes)
        .expect("the operating system's random number generator failed");
    format!("{TOKEN_PREFIX}{}", hex::encode(bytes))
}

/// The hash of `token` as the store keeps it: SHA-256, as 64 lowercase hex digits.
///
/// A fast, unsalted hash is right here: tokens carry 256 random bits, so neither brute force
/// nor precomputed tables can find a token from its hash, and a slow password hash would only
/// slow down every connection. (Passwords chosen by people would need a slow, salted hash.)
pub fn hash_token(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// The token in an `Authorization` header value of the form `Bearer <token>`.
///
/// The scheme is matched case-insensitively and may be followed by several spaces; whitespace
/// around the whole value is ignored. Returns `None` for any other scheme, and for a token
/// that is empty, longer than [`MAX_TOKEN_LEN`], or has characters other than visible ASCII
/// (so no whitespace inside it).
pub fn bearer_token(header_value: &str) -> Option<&str> {
    let value = header_value.trim_matches([' ', '\t']);
    let (scheme, rest) = value.split_once([' ', '\t'])?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return None;
    }
    let token = rest.trim_start_matches([' ', '\t']);
    let well_formed = !token.is_empty()
        && token.len() <= MAX_TOKEN_LEN
        && token.bytes().all(|b| b.is_ascii_graphic());
    well_formed.then_some(token)
}

/// The administrator's token, of which only the hash is kept in memory.
///
/// [`AdminToken::verifies`] compares hashes in constant time, so how long a check takes tells
/// nothing about how much of a guess was right.
#[derive(Clone)]
pub struct AdminToken {
    hash: [u8; 32],
}

impl AdminToken {
    /// Keeps the hash of `token` (the clear token is not kept).
    pub fn new(token: &str) -> AdminToken {
        AdminToken {
            hash: Sha256::digest(token.as_bytes()).into(),
        }
    }

    /// An admin token known only by its hash, as made by [`hash_token`] (64 hex digits, either
    /// case): lets a configuration hold the hash rather than the token. `None` if `hash_hex`
    /// is not such a hash.
    pub fn from_hash_hex(hash_hex: &str) -> Option<AdminToken> {
        let bytes = hash_hex.as_bytes();
        if bytes.len() != 64 {
            return None;
        }
        let mut hash = [0u8; 32];
        for (out, pair) in hash.iter_mut().zip(bytes.chunks_exact(2)) {
            let digit = |b: u8| (b as char).to_digit(16);
            *out = u8::try_from(digit(pair[0])? * 16 + digit(pair[1])?).ok()?;
        }
        Some(AdminToken { hash })
    }

    /// Whether `presented` is the admin token. Takes the same time whatever is presented
    /// (up to hashing it).
    pub fn verifies(&self, presented: &str) -> bool {
        let presented: [u8; 32] = Sha256::digest(presented.as_bytes()).into();
        self.hash.ct_eq(&presented).into()
    }
}

impl fmt::Debug for AdminToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AdminToken(<hidden>)")
    }
}

/// The bot name rule lives with the registry of bots (the store checks what it registers).
pub use crate::store::{BotNameError, check_bot_name};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_random_and_well_formed() {
        let a = generate_token();
        let b = generate_token();
        assert_ne!(a, b);
        for token in [&a, &b] {
            let digits = token.strip_prefix(TOKEN_PREFIX).expect("prefix");
            assert_eq!(digits.len(), 64);
            assert!(
                digits
                    .bytes()
                    .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
            );
            // A generated token survives the header round trip.
            assert_eq!(
                bearer_token(&format!("Bearer {token}")),
                Some(token.as_str())
            );
        }
    }

    #[test]
    fn hash_is_stable_sha256_and_never_the_token() {
        // SHA-256("abc"), a published test vector.
        assert_eq!(
            hash_token("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let token = generate_token();
        let hash = hash_token(&token);
        assert_eq!(hash, hash_token(&token));
        assert_ne!(hash, token);
        assert!(!hash.contains(&token[TOKEN_PREFIX.len()..]));
        assert_ne!(hash, hash_token(&generate_token()));
    }

    #[test]
    fn bearer_header_parsing() {
        assert_eq!(bearer_token("Bearer abc"), Some("abc"));
        assert_eq!(bearer_token("bearer abc"), Some("abc"));
        assert_eq!(bearer_token("BEARER abc"), Some("abc"));
        assert_eq!(bearer_token("  Bearer   abc  "), Some("abc"));
        assert_eq!(bearer_token("Bearer\tabc"), Some("abc"));
        assert_eq!(bearer_token("Bearer a+b/c=="), Some("a+b/c=="));
        assert_eq!(bearer_token(""), None);
        assert_eq!(bearer_token("Bearer"), None);
        assert_eq!(bearer_token("Bearer "), None);
        assert_eq!(bearer_token("Bearer    "), None);
        assert_eq!(bearer_token("Basic abc"), None);
        assert_eq!(bearer_token("Bearerabc"), None);
        assert_eq!(bearer_token("Token abc"), None);
        assert_eq!(bearer_token("Bearer abc def"), None);
        assert_eq!(bearer_token("Bearer abc\ndef"), None);
        assert_eq!(bearer_token("Bearer äbc"), None);
        let longest = "x".repeat(MAX_TOKEN_LEN);
        assert_eq!(
            bearer_token(&format!("Bearer {longest}")),
            Some(longest.as_str())
        );
        assert_eq!(bearer_token(&format!("Bearer {longest}x")), None);
    }

    #[test]
    fn admin_token_checks() {
        let token = generate_token();
        let admin = AdminToken::new(&token);
        assert!(admin.verifies(&token));
        assert!(!admin.verifies(""));
        assert!(!admin.verifies(&generate_token()));
        assert!(!admin.verifies(&token[..token.len() - 1]));
        assert!(!admin.verifies(&format!("{token} ")));
        assert!(!format!("{admin:?}").contains(&hash_token(&token)));

        let from_hash = AdminToken::from_hash_hex(&hash_token(&token)).expect("valid hash");
        assert!(from_hash.verifies(&token));
        let upper = AdminToken::from_hash_hex(&hash_token(&token).to_uppercase()).unwrap();
        assert!(upper.verifies(&token));
        assert!(AdminToken::from_hash_hex("abc").is_none());
        assert!(AdminToken::from_hash_hex(&"g".repeat(64)).is_none());
        assert!(AdminToken::from_hash_hex(&"é".repeat(32)).is_none());
    }
}
