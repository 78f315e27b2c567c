//! HTML (placeholder until the HTML reader lands).

use crate::budget::Budget;
use crate::document::{Page, TextError};

pub(crate) fn extract(_bytes: &[u8], _budget: &Budget) -> Result<Page, TextError> {
    Err(TextError::Unsupported)
}
