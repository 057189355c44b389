//! The query parameters of a page: every one checked, a bad one refused with a 400 page
//! naming it, its value and what is legal.

use std::collections::BTreeMap;

use super::WebError;

/// The query parameters of a page that takes `allowed` (each at most once).
pub(super) fn params(
    raw: Option<&str>,
    allowed: &[&str],
) -> Result<BTreeMap<String, String>, WebError> {
    let mut found = BTreeMap::new();
    let legal = || {
        if allowed.is_empty() {
            "this page takes no query parameters".to_owned()
        } else {
            format!("this page takes {}", allowed.join(", "))
        }
    };
    for (key, value) in form_urlencoded::parse(raw.unwrap_or("").as_bytes()) {
        if !allowed.contains(&key.as_ref()) {
            return Err(WebError::BadRequest(format!(
                "unknown query parameter {}: {}",
                knobel_engine::quoted(&key),
                legal()
            )));
        }
        if found.insert(key.to_string(), value.to_string()).is_some() {
            return Err(WebError::BadRequest(format!(
                "query parameter {} is given twice: give it once",
                knobel_engine::quoted(&key)
            )));
        }
    }
    Ok(found)
}

/// `value` if it is one of `legal`, else the 400 naming `key`, the value and the legal ones.
pub(super) fn one_of<'a>(key: &str, value: &str, legal: &[&'a str]) -> Result<&'a str, WebError> {
    legal.iter().copied().find(|l| *l == value).ok_or_else(|| {
        WebError::BadRequest(format!(
            "{key} = {} is not legal: it must be one of {}",
            knobel_engine::quoted(value),
            legal.join(", ")
        ))
    })
}

/// A path segment naming a league or bot: at most [`knobel_proto::names::MAX_NAME_BYTES`]
/// bytes (a longer one cannot exist).
pub(super) fn name(what: &str, value: &str) -> Result<(), WebError> {
    let most = knobel_proto::names::MAX_NAME_BYTES;
    if value.is_empty() || value.len() > most {
        return Err(WebError::BadRequest(format!(
            "the {what} name is {} bytes: names are 1..={most} bytes",
            value.len()
        )));
    }
    Ok(())
}
