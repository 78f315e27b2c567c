//! Files: full texts, uploads and arXiv PDFs.

pub mod attach_arxiv_pdf;
pub mod get_item_fulltext;
pub mod upload_attachment;
