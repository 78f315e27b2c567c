//! EPUB (placeholder until the EPUB reader lands).

use crate::budget::Budget;
use crate::document::{Page, TextError};

pub(crate) fn extract(_bytes: &[u8], _budget: &Budget) -> Result<Vec<Page>, TextError> {
    Err(TextError::Unsupported)
}
