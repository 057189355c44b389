//! Matches, their logs and their seats (with each seat's result): `write` records matches as they start and end
//! (in batches, for the recorder's group commit), `read` lists them and reads them back.

use super::StoreError;

mod read;
mod write;

fn corrupt(what: String) -> StoreError {
    StoreError::Corrupt { what }
}
