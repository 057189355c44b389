//! Matches, their logs and per-seat results: `write` records matches as they start and end
//! (in batches, for the recorder's group commit), `read` lists them and reads them back.

use super::StoreError;

mod read;
mod write;

fn corrupt(what: String) -> StoreError {
    StoreError::Corrupt { what }
}

fn parse_seat_names(id: &str, json: &str) -> Result<Vec<String>, StoreError> {
    serde_json::from_str(json).map_err(|e| {
        corrupt(format!(
            "match \"{id}\": seat names are not a JSON string array: {e}"
        ))
    })
}
