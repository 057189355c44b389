//! The one rule for bot names: the names registered with the arena (`knobel bot add`, the
//! `Admin.AddBot` RPC) and the names bots give in their `Hello`.
//!
//! A name is accepted by [`check_name`] if
//!
//! - it has [`MIN_NAME_CHARS`]`..=`[`MAX_NAME_CHARS`] characters (Unicode scalar values) and
//!   at most [`MAX_NAME_BYTES`] bytes of UTF-8;
//! - it is in Unicode Normalization Form C (NFC). A name in another form is **refused**, not
//!   normalised, and the error shows the NFC form to use: what is stored and shown is then
//!   exactly what was typed;
//! - it has no control characters (general category Cc), no format characters (Cf: the
//!   bidirectional controls U+202A..=U+202E, U+2066..=U+2069, U+200E, U+200F, U+061C, the
//!   zero-width characters U+200B..=U+200D, U+2060, U+FEFF, ...), no other default-ignorable
//!   (invisible) characters (variation selectors, U+115F, U+3164, ...), no line or
//!   paragraph separators, no private-use, surrogate or unassigned code points, and no
//!   whitespace other than the plain space U+0020, no blank-looking U+2800, and no
//!   combining mark as its first character;
//! - it does not start or end with a space;
//! - it is not in the reserved space of the arena's built-in players: its [`name_key`] does
//!   not start with the key of [`RESERVED_PREFIX`] (so neither `builtin-x` nor `BUILTIN-x`
//!   nor a look-alike of them).
//!
//! Names are unique up to case and Unicode confusables: two names with the same
//! [`name_key`] (the UTS #39 skeleton of the case-folded NFC name) are the same name to the
//! arena, so `ALICE` and `alice`, or `heur` and `hеur` (with a Cyrillic `е`), cannot both be
//! registered.

use std::fmt;

use unicode_normalization::UnicodeNormalization;
use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};

/// The fewest characters a name has.
pub const MIN_NAME_CHARS: usize = 1;
/// The most characters (Unicode scalar values) a name has.
pub const MAX_NAME_CHARS: usize = 32;
/// The most bytes a name has, UTF-8 encoded.
pub const MAX_NAME_BYTES: usize = 128;
/// Names whose key starts with this prefix's key are reserved for the arena's built-in
/// players (see [`builtin_name`]).
pub const RESERVED_PREFIX: &str = "builtin-";

/// The name of the arena's `n`-th built-in player of `policy` in a match, e.g.
/// `builtin-heuristic-1`: always in the reserved space, so no bot can be mistaken for one.
pub fn builtin_name(policy: &str, n: usize) -> String {
    format!("{RESERVED_PREFIX}{policy}-{n}")
}

/// The rule [`check_name`] applies, in one paragraph, for help texts (derived from the
/// constants, so it always says what the code does).
pub fn rule() -> String {
    format!(
        "{MIN_NAME_CHARS}..={MAX_NAME_CHARS} characters and at most {MAX_NAME_BYTES} bytes of \
         UTF-8, in Unicode NFC; no control, format (bidirectional, zero-width), invisible \
         (default-ignorable), separator, private-use or unassigned characters, no whitespace \
         but the plain space, none at either end, no combining mark first; names starting with \"{RESERVED_PREFIX}\" \
         are reserved for built-in players; names are unique regardless of case and of \
         look-alike characters (Unicode UTS #39 confusables)"
    )
}

/// What kind of character a name may not contain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CharClass {
    /// A control character (Cc).
    Control,
    /// A bidirectional control (embeddings, overrides, isolates, marks).
    Bidi,
    /// A zero-width character (spaces, joiners, word joiner, byte order mark).
    ZeroWidth,
    /// Another format character (Cf).
    Format,
    /// Another invisible, default-ignorable code point (variation selectors, fillers, ...).
    Invisible,
    /// Whitespace other than U+0020, or a line or paragraph separator.
    Whitespace,
    /// A private-use, surrogate or unassigned code point.
    Unassigned,
    /// A combining mark at the start, where it has nothing to combine with.
    LeadingMark,
}

impl CharClass {
    fn describe(self) -> &'static str {
        match self {
            CharClass::Control => "a control character",
            CharClass::Bidi => "a bidirectional control",
            CharClass::ZeroWidth => "a zero-width character",
            CharClass::Format => "an invisible format character",
            CharClass::Invisible => "an invisible (default-ignorable) character",
            CharClass::Whitespace => "whitespace other than the plain space U+0020",
            CharClass::Unassigned => "a private-use or unassigned code point",
            CharClass::LeadingMark => "a combining mark at the start",
        }
    }
}

/// A character as error messages show it: `U+202E RIGHT-TO-LEFT OVERRIDE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CodePoint(pub char);

impl fmt::Display for CodePoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "U+{:04X}", u32::from(self.0))?;
        if let Some(name) = unicode_names2::name(self.0) {
            write!(f, " {name}")?;
        }
        Ok(())
    }
}

/// Why a name breaks the rule (see the [module documentation](self)).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// The name is empty.
    #[error("a bot name cannot be empty: it has {MIN_NAME_CHARS}..={MAX_NAME_CHARS} characters")]
    Empty,
    /// Too many characters.
    #[error("a bot name has at most {MAX_NAME_CHARS} characters: this one has {chars}")]
    TooManyChars {
        /// The name's characters.
        chars: usize,
    },
    /// Too many bytes.
    #[error(
        "a bot name has at most {MAX_NAME_BYTES} bytes of UTF-8: this one has {bytes} (in {chars} characters)"
    )]
    TooManyBytes {
        /// The name's UTF-8 bytes.
        bytes: usize,
        /// The name's characters.
        chars: usize,
    },
    /// A forbidden character.
    #[error(
        "a bot name cannot contain {}: character {position} is {code_point}",
        class.describe()
    )]
    Forbidden {
        /// Its position in the name, from 0, in characters.
        position: usize,
        /// The character.
        code_point: CodePoint,
        /// What kind of character it is.
        class: CharClass,
    },
    /// Whitespace at the start or the end.
    #[error("a bot name cannot start or end with a space")]
    SurroundingSpace,
    /// The name is not in NFC.
    #[error(
        "a bot name must be in Unicode NFC (composed characters): write {nfc:?} instead (character {position} is {code_point})"
    )]
    NotNfc {
        /// The same name in NFC.
        nfc: String,
        /// The first character that differs from the NFC form.
        position: usize,
        /// That character.
        code_point: CodePoint,
    },
    /// A reserved name.
    #[error(
        "a bot name cannot start with {RESERVED_PREFIX:?} (in any case or look-alike letters): such names are reserved for the arena's built-in players"
    )]
    Reserved,
}

/// The class of a character a name may not contain, if it is one.
pub fn forbidden_class(c: char) -> Option<CharClass> {
    match c {
        ' ' => return None,
        '\u{202A}'..='\u{202E}'
        | '\u{2066}'..='\u{2069}'
        | '\u{200E}'
        | '\u{200F}'
        | '\u{061C}' => return Some(CharClass::Bidi),
        '\u{200B}'..='\u{200D}' | '\u{2060}' | '\u{FEFF}' | '\u{180E}' => {
            return Some(CharClass::ZeroWidth);
        }
        // Blank-looking symbols that are not default-ignorable.
        '\u{2800}' => return Some(CharClass::Invisible),
        _ => {}
    }
    let class = match c.general_category() {
        GeneralCategory::Control => Some(CharClass::Control),
        GeneralCategory::Format => Some(CharClass::Format),
        GeneralCategory::LineSeparator
        | GeneralCategory::ParagraphSeparator
        | GeneralCategory::SpaceSeparator => Some(CharClass::Whitespace),
        GeneralCategory::PrivateUse | GeneralCategory::Surrogate | GeneralCategory::Unassigned => {
            Some(CharClass::Unassigned)
        }
        _ => None,
    };
    class.or_else(|| {
        if c.is_whitespace() {
            Some(CharClass::Whitespace)
        } else if is_default_ignorable(c) {
            Some(CharClass::Invisible)
        } else {
            None
        }
    })
}

/// Whether `c` is a default-ignorable code point: the UTS #39 skeleton drops exactly those,
/// so a lone character whose skeleton is empty is one.
fn is_default_ignorable(c: char) -> bool {
    let mut buf = [0u8; 4];
    unicode_security::skeleton(c.encode_utf8(&mut buf))
        .next()
        .is_none()
}

/// Checks `name` against the rule (see the [module documentation](self)).
pub fn check_name(name: &str) -> Result<(), NameError> {
    if name.is_empty() {
        return Err(NameError::Empty);
    }
    let chars = name.chars().count();
    if chars > MAX_NAME_CHARS {
        return Err(NameError::TooManyChars { chars });
    }
    if name.len() > MAX_NAME_BYTES {
        return Err(NameError::TooManyBytes {
            bytes: name.len(),
            chars,
        });
    }
    if let Some((position, c, class)) = name
        .chars()
        .enumerate()
        .find_map(|(i, c)| forbidden_class(c).map(|class| (i, c, class)))
    {
        return Err(NameError::Forbidden {
            position,
            code_point: CodePoint(c),
            class,
        });
    }
    if name.starts_with(' ') || name.ends_with(' ') {
        return Err(NameError::SurroundingSpace);
    }
    let first = name.chars().next().expect("not empty");
    if matches!(
        first.general_category(),
        GeneralCategory::NonspacingMark
            | GeneralCategory::SpacingMark
            | GeneralCategory::EnclosingMark
    ) {
        return Err(NameError::Forbidden {
            position: 0,
            code_point: CodePoint(first),
            class: CharClass::LeadingMark,
        });
    }
    if !unicode_normalization::is_nfc(name) {
        let nfc: String = name.nfc().collect();
        let (position, c) = name
            .chars()
            .zip(nfc.chars().map(Some).chain(std::iter::repeat(None)))
            .enumerate()
            .find(|(_, (a, b))| Some(*a) != *b)
            .map(|(i, (a, _))| (i, a))
            .unwrap_or((0, name.chars().next().expect("not empty")));
        return Err(NameError::NotNfc {
            nfc,
            position,
            code_point: CodePoint(c),
        });
    }
    if is_reserved(name) {
        return Err(NameError::Reserved);
    }
    Ok(())
}

/// The key under which the arena keeps a name unique: the UTS #39 skeleton of the
/// case-folded NFC name. Names with the same key look alike (`ALICE`, `alice`, `aIice`) and
/// cannot both be registered.
pub fn name_key(name: &str) -> String {
    let nfc: String = name.nfc().collect();
    let folded = unicase::UniCase::new(nfc.as_str()).to_folded_case();
    unicode_security::skeleton(&folded).collect()
}

/// Whether `name` is in the built-in players' reserved space: its key starts with the key of
/// [`RESERVED_PREFIX`].
pub fn is_reserved(name: &str) -> bool {
    name_key(name).starts_with(&name_key(RESERVED_PREFIX))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(name: &str) -> String {
        check_name(name).expect_err(name).to_string()
    }

    #[test]
    fn plain_names_pass() {
        for ok in [
            "zocker-3000",
            "Würfel Bot",
            "heur",
            "x",
            "日本語のボット",
            "a b",
            "builtin",
            "my-builtin-bot",
        ] {
            assert_eq!(check_name(ok), Ok(()), "{ok:?}");
        }
    }

    #[test]
    fn look_alikes_and_case_share_a_key() {
        // A Cyrillic е (U+0435) in "hеur".
        let cyrillic = "h\u{0435}ur";
        assert_eq!(check_name(cyrillic), Ok(()));
        assert_ne!(cyrillic, "heur");
        assert_eq!(name_key(cyrillic), name_key("heur"));
        assert_eq!(name_key("ALICE"), name_key("alice"));
        assert_eq!(name_key("Alice"), name_key("aLiCe"));
        assert_eq!(name_key("straße"), name_key("STRASSE"));
        assert_eq!(name_key("paypal"), name_key("pаypаl"));
        assert_ne!(name_key("alice"), name_key("alicia"));
        assert_ne!(name_key("bot-1"), name_key("bot-2"));
    }

    #[test]
    fn bidi_controls_are_refused_by_name() {
        assert_eq!(
            err("abc\u{202E}fed"),
            "a bot name cannot contain a bidirectional control: character 3 is U+202E RIGHT-TO-LEFT OVERRIDE"
        );
        for c in [
            '\u{202A}', '\u{202B}', '\u{202C}', '\u{202D}', '\u{2066}', '\u{2067}', '\u{2068}',
            '\u{2069}', '\u{200E}', '\u{200F}', '\u{061C}',
        ] {
            let name = format!("a{c}b");
            assert!(
                matches!(
                    check_name(&name),
                    Err(NameError::Forbidden {
                        class: CharClass::Bidi,
                        position: 1,
                        ..
                    })
                ),
                "{c:?}"
            );
        }
    }

    #[test]
    fn zero_width_and_invisible_characters_are_refused() {
        assert_eq!(
            err("zocker\u{200D}bot"),
            "a bot name cannot contain a zero-width character: character 6 is U+200D ZERO WIDTH JOINER"
        );
        for (c, class) in [
            ('\u{200B}', CharClass::ZeroWidth),
            ('\u{200C}', CharClass::ZeroWidth),
            ('\u{2060}', CharClass::ZeroWidth),
            ('\u{FEFF}', CharClass::ZeroWidth),
            ('\u{00AD}', CharClass::Format),
            ('\u{FE0F}', CharClass::Invisible),
            ('\u{3164}', CharClass::Invisible),
            ('\u{115F}', CharClass::Invisible),
            ('\u{E0041}', CharClass::Format),
            ('\u{00A0}', CharClass::Whitespace),
            ('\u{2028}', CharClass::Whitespace),
            ('\t', CharClass::Control),
            ('\n', CharClass::Control),
            ('\u{7F}', CharClass::Control),
            ('\u{E000}', CharClass::Unassigned),
            ('\u{2800}', CharClass::Invisible),
        ] {
            let name = format!("ab{c}");
            match check_name(&name) {
                Err(NameError::Forbidden {
                    class: got,
                    position: 2,
                    ..
                }) => assert_eq!(got, class, "{c:?}"),
                other => panic!("{c:?}: {other:?}"),
            }
        }
        assert_eq!(
            err("tab\tbed"),
            "a bot name cannot contain a control character: character 3 is U+0009"
        );
    }

    #[test]
    fn nfd_is_refused_with_its_nfc_form() {
        let nfd = "Wu\u{0308}rfel";
        let nfc = "W\u{00FC}rfel";
        assert_eq!(check_name(nfc), Ok(()));
        assert_eq!(
            err(nfd),
            "a bot name must be in Unicode NFC (composed characters): write \"Würfel\" instead (character 1 is U+0075 LATIN SMALL LETTER U)"
        );
        assert_eq!(name_key(nfd), name_key(nfc));
    }

    #[test]
    fn lengths_in_characters_and_bytes() {
        assert_eq!(check_name(&"x".repeat(MAX_NAME_CHARS)), Ok(()));
        assert_eq!(
            err(&"x".repeat(MAX_NAME_CHARS + 1)),
            "a bot name has at most 32 characters: this one has 33"
        );
        // 32 characters of 4 bytes each: 128 bytes, the limit.
        assert_eq!(check_name(&"😀".repeat(32)), Ok(()));
        // 31 four-byte characters and two 1-byte ones: within 32 characters, 126 bytes.
        assert_eq!(check_name(&format!("{}ab", "😀".repeat(30))), Ok(()));
        // A combining mark that composes with nothing: 32 chars but more bytes, still in NFC?
        // Use 3-byte CJK characters: 32 of them are 96 bytes, fine.
        assert_eq!(check_name(&"語".repeat(32)), Ok(()));
        // Characters counted, not bytes: 20 ü are 40 bytes, well within both.
        assert_eq!(check_name(&"ü".repeat(20)), Ok(()));
        assert_eq!(
            err(""),
            "a bot name cannot be empty: it has 1..=32 characters"
        );
    }

    #[test]
    fn the_byte_limit_binds_before_the_character_limit_can() {
        // The byte limit is reachable only with more than 4 bytes per character on average,
        // which UTF-8 never has; a name within the character limit is always within the
        // byte limit, unless the constants change. Check the guard against the constants.
        const { assert!(MAX_NAME_CHARS * 4 <= MAX_NAME_BYTES) };
        assert!(matches!(
            check_name(&"😀".repeat(33)),
            Err(NameError::TooManyChars { chars: 33 })
        ));
        let error = NameError::TooManyBytes {
            bytes: 130,
            chars: 32,
        };
        assert_eq!(
            error.to_string(),
            "a bot name has at most 128 bytes of UTF-8: this one has 130 (in 32 characters)"
        );
    }

    #[test]
    fn a_leading_combining_mark_is_refused() {
        assert_eq!(
            err("\u{0301}x"),
            "a bot name cannot contain a combining mark at the start: character 0 is U+0301 COMBINING ACUTE ACCENT"
        );
        // After a letter it combines (no precomposed form exists: this is NFC).
        assert_eq!(check_name("x\u{0301}"), Ok(()));
    }

    #[test]
    fn surrounding_spaces_are_refused() {
        assert_eq!(err(" lead"), "a bot name cannot start or end with a space");
        assert_eq!(err("trail "), "a bot name cannot start or end with a space");
        assert_eq!(err(" "), "a bot name cannot start or end with a space");
    }

    #[test]
    fn reserved_names_are_refused() {
        let message = "a bot name cannot start with \"builtin-\" (in any case or look-alike letters): such names are reserved for the arena's built-in players";
        assert_eq!(err("builtin-heuristic-1"), message);
        assert_eq!(err("BUILTIN-heuristic-1"), message);
        assert_eq!(err("Builtin-x"), message);
        // Cyrillic і (U+0456) for the i.
        assert_eq!(err("bu\u{0456}ltin-x"), message);
        assert_eq!(err("builtin-"), message);
        assert!(is_reserved(&builtin_name("heuristic", 1)));
        assert_eq!(builtin_name("heuristic", 2), "builtin-heuristic-2");
    }

    #[test]
    fn the_rule_text_names_the_limits() {
        let rule = rule();
        assert!(rule.contains("1..=32 characters"), "{rule}");
        assert!(rule.contains("128 bytes"), "{rule}");
        assert!(rule.contains("\"builtin-\""), "{rule}");
        assert!(rule.contains("NFC"), "{rule}");
    }
}
