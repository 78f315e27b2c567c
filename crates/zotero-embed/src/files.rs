//! Reading a sentence-transformers model directory: which files there are, what they say, and
//! their hashes (the model's identity).

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::EmbedError;

/// How token vectors become one text vector (sentence-transformers' `Pooling` module).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pooling {
    /// Mean of the token vectors, padding excluded (all-MiniLM-L6-v2).
    Mean,
    /// The vector of the first token, `[CLS]` (bge-small-en-v1.5).
    Cls,
}

/// What follows the transformer: the model's own modules.json, or the documented defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pipeline {
    pub pooling: Pooling,
    pub normalize: bool,
}

/// The files read, with their bytes, so that each is hashed once from what was actually used.
#[derive(Default)]
pub struct Hashes(Vec<(String, String)>);

impl Hashes {
    pub fn add(&mut self, name: &str, bytes: &[u8]) {
        let digest = Sha256::digest(bytes);
        let hex = digest
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>();
        self.0.push((name.to_owned(), hex));
    }

    /// Hashes the file at `path` by streaming it (a model's weights are not read whole).
    pub fn add_file(&mut self, name: &str, path: &Path) -> Result<(), EmbedError> {
        let io = |source| EmbedError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut file = std::fs::File::open(path).map_err(io)?;
        let mut hasher = Sha256::new();
        std::io::copy(&mut file, &mut hasher).map_err(io)?;
        let hex = hasher
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>();
        self.0.push((name.to_owned(), hex));
        Ok(())
    }

    pub fn into_sorted(mut self) -> Vec<(String, String)> {
        self.0.sort();
        self.0
    }
}

pub fn read_required(dir: &Path, name: &str, hashes: &mut Hashes) -> Result<Vec<u8>, EmbedError> {
    match read_optional(dir, name, hashes)? {
        Some(bytes) => Ok(bytes),
        None => Err(EmbedError::MissingFile {
            file: name.to_owned(),
            dir: dir.to_path_buf(),
        }),
    }
}

pub fn read_optional(
    dir: &Path,
    name: &str,
    hashes: &mut Hashes,
) -> Result<Option<Vec<u8>>, EmbedError> {
    let path = dir.join(name);
    match std::fs::read(&path) {
        Ok(bytes) => {
            hashes.add(name, &bytes);
            Ok(Some(bytes))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(EmbedError::Io { path, source }),
    }
}

/// The weights file `name` in `dir`: present, and its size and header sound (see
/// [`zotero_hub::weights`]), checked before it is hashed or loaded.
pub fn check_weights(dir: &Path, name: &str) -> Result<(), EmbedError> {
    use zotero_hub::weights::{check_safetensors, WeightsError};
    let path = dir.join(name);
    match check_safetensors(&path) {
        Ok(_) => Ok(()),
        Err(WeightsError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(EmbedError::MissingFile {
                file: name.to_owned(),
                dir: dir.to_path_buf(),
            })
        }
        Err(WeightsError::Io(source)) => Err(EmbedError::Io { path, source }),
        Err(WeightsError::Bad(message)) => Err(EmbedError::BadSafetensors { path, message }),
    }
}

pub fn parse_json<T: for<'de> Deserialize<'de>>(
    dir: &Path,
    name: &str,
    bytes: &[u8],
) -> Result<T, EmbedError> {
    serde_json::from_slice(bytes).map_err(|e| EmbedError::BadConfig {
        path: dir.join(name),
        message: e.to_string(),
    })
}

/// config.json, checked to be a BERT the candle model can run, with the fields it needs.
pub fn bert_config(
    dir: &Path,
    bytes: &[u8],
) -> Result<candle_transformers::models::bert::Config, EmbedError> {
    let path = dir.join("config.json");
    let mut value: Value = parse_json(dir, "config.json", bytes)?;
    let Some(object) = value.as_object_mut() else {
        return Err(EmbedError::BadConfig {
            path,
            message: "it is not a JSON object".to_owned(),
        });
    };
    let model_type = object.get("model_type").and_then(Value::as_str);
    let architectures: Vec<&str> = object
        .get("architectures")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    // model_type is what transformers dispatches on; old configs without it are accepted when
    // their architectures are all BERT ones.
    let is_bert = match model_type {
        Some(t) => t == "bert",
        None => !architectures.is_empty() && architectures.iter().all(|a| a.starts_with("Bert")),
    };
    if !is_bert {
        let found = model_type
            .map(str::to_owned)
            .or_else(|| architectures.first().map(|a| (*a).to_owned()))
            .unwrap_or_else(|| "unknown (no model_type)".to_owned());
        return Err(EmbedError::UnsupportedArchitecture { path, found });
    }
    // transformers' names for the activation, mapped to candle's; the tanh approximations are
    // one function under several names.
    if let Some(act) = object.get("hidden_act").and_then(Value::as_str) {
        let candle_name = match act {
            "gelu" => "gelu",
            "relu" => "relu",
            "gelu_new" | "gelu_pytorch_tanh" | "gelu_fast" => "geluapproximate",
            other => {
                return Err(EmbedError::Unsupported {
                    path,
                    what: format!("hidden_act `{other}`"),
                    supported: "gelu, gelu_new / gelu_pytorch_tanh, relu",
                })
            }
        };
        object.insert("hidden_act".to_owned(), Value::from(candle_name));
    } else {
        object.insert("hidden_act".to_owned(), Value::from("gelu"));
    }
    if let Some(kind) = object
        .get("position_embedding_type")
        .and_then(Value::as_str)
    {
        if kind != "absolute" {
            return Err(EmbedError::Unsupported {
                path,
                what: format!("position_embedding_type `{kind}`"),
                supported: "absolute",
            });
        }
    }
    // transformers' BertConfig defaults, for configs that leave them out; candle requires them.
    let defaults = [
        ("hidden_dropout_prob", Value::from(0.1)),
        ("initializer_range", Value::from(0.02)),
        ("type_vocab_size", Value::from(2)),
        ("layer_norm_eps", Value::from(1e-12)),
        ("pad_token_id", Value::from(0)),
        ("max_position_embeddings", Value::from(512)),
    ];
    for (key, default) in defaults {
        object.entry(key).or_insert(default);
    }
    let config: candle_transformers::models::bert::Config =
        serde_json::from_value(value).map_err(|e| EmbedError::BadConfig {
            path: path.clone(),
            message: e.to_string(),
        })?;
    if config.num_attention_heads == 0
        || !config
            .hidden_size
            .is_multiple_of(config.num_attention_heads)
    {
        return Err(EmbedError::Shape {
            path,
            what: format!(
                "hidden_size {} is not a multiple of num_attention_heads {}",
                config.hidden_size, config.num_attention_heads
            ),
        });
    }
    Ok(config)
}

#[derive(Deserialize)]
struct Module {
    #[serde(default)]
    path: String,
    #[serde(rename = "type")]
    kind: String,
}

#[derive(Deserialize)]
struct PoolingConfig {
    word_embedding_dimension: Option<usize>,
    #[serde(default)]
    pooling_mode_cls_token: bool,
    #[serde(default)]
    pooling_mode_mean_tokens: bool,
    #[serde(default)]
    pooling_mode_max_tokens: bool,
    #[serde(default)]
    pooling_mode_mean_sqrt_len_tokens: bool,
    #[serde(default)]
    pooling_mode_weightedmean_tokens: bool,
    #[serde(default)]
    pooling_mode_lasttoken: bool,
}

/// The modules after the transformer. Without modules.json, sentence-transformers reads a
/// plain Hugging Face model as transformer + mean pooling, no normalization; so does this,
/// except that a `1_Pooling/config.json` that is there is honoured.
pub fn pipeline(dir: &Path, hidden: usize, hashes: &mut Hashes) -> Result<Pipeline, EmbedError> {
    let modules: Vec<Module> = match read_optional(dir, "modules.json", hashes)? {
        Some(bytes) => parse_json(dir, "modules.json", &bytes)?,
        None => {
            let pooling_file = "1_Pooling/config.json";
            return match read_optional(dir, pooling_file, hashes)? {
                Some(bytes) => Ok(Pipeline {
                    pooling: pooling_mode(dir, pooling_file, &bytes, hidden)?,
                    normalize: false,
                }),
                None => Ok(Pipeline {
                    pooling: Pooling::Mean,
                    normalize: false,
                }),
            };
        }
    };
    let path = dir.join("modules.json");
    let mut pooling = None;
    let mut normalize = false;
    let mut transformer = false;
    for module in &modules {
        // Type names are `sentence_transformers.models.Pooling`, or `...models.Pooling.Pooling`
        // in older files; the class name is what matters.
        let class = module
            .kind
            .rsplit('.')
            .find(|part| part.chars().next().is_some_and(char::is_uppercase))
            .unwrap_or(module.kind.as_str());
        match class {
            "Transformer" if !transformer && pooling.is_none() && !normalize => transformer = true,
            "Pooling" if transformer && pooling.is_none() && !normalize => {
                let file = if module.path.is_empty() {
                    "config.json".to_owned()
                } else {
                    format!("{}/config.json", module.path.trim_end_matches('/'))
                };
                let bytes = read_required(dir, &file, hashes)?;
                pooling = Some(pooling_mode(dir, &file, &bytes, hidden)?);
            }
            "Normalize" if transformer && !normalize => normalize = true,
            _ => {
                return Err(EmbedError::Unsupported {
                    path,
                    what: format!("the module `{}` here (modules: {})", module.kind, {
                        modules
                            .iter()
                            .map(|m| m.kind.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    }),
                    supported: "Transformer, then Pooling (mean or CLS), then optionally \
                                Normalize, each once",
                })
            }
        }
    }
    if !transformer {
        return Err(EmbedError::Unsupported {
            path,
            what: "a pipeline without a Transformer module".to_owned(),
            supported: "Transformer, then Pooling (mean or CLS), then optionally Normalize",
        });
    }
    // Without a Pooling module sentence-transformers has token vectors but no sentence vector;
    // guessing one here would give vectors the reference never gives.
    let Some(pooling) = pooling else {
        return Err(EmbedError::Unsupported {
            path,
            what: "a pipeline without a Pooling module".to_owned(),
            supported: "Transformer, then Pooling (mean or CLS), then optionally Normalize",
        });
    };
    Ok(Pipeline { pooling, normalize })
}

fn pooling_mode(
    dir: &Path,
    file: &str,
    bytes: &[u8],
    hidden: usize,
) -> Result<Pooling, EmbedError> {
    let config: PoolingConfig = parse_json(dir, file, bytes)?;
    let path = dir.join(file);
    if let Some(dims) = config.word_embedding_dimension {
        if dims != hidden {
            return Err(EmbedError::Shape {
                path,
                what: format!(
                    "word_embedding_dimension is {dims}, but config.json's hidden_size is {hidden}"
                ),
            });
        }
    }
    let unsupported = [
        ("max", config.pooling_mode_max_tokens),
        ("mean_sqrt_len", config.pooling_mode_mean_sqrt_len_tokens),
        ("weightedmean", config.pooling_mode_weightedmean_tokens),
        ("lasttoken", config.pooling_mode_lasttoken),
    ];
    let mut asked: Vec<&str> = unsupported
        .iter()
        .filter(|(_, on)| *on)
        .map(|(name, _)| *name)
        .collect();
    if config.pooling_mode_cls_token {
        asked.push("cls");
    }
    if config.pooling_mode_mean_tokens {
        asked.push("mean");
    }
    match asked.as_slice() {
        ["cls"] => Ok(Pooling::Cls),
        ["mean"] => Ok(Pooling::Mean),
        _ => Err(EmbedError::Unsupported {
            path,
            what: format!("pooling modes [{}]", asked.join(", ")),
            supported: "exactly one of pooling_mode_mean_tokens, pooling_mode_cls_token",
        }),
    }
}

#[derive(Deserialize, Default)]
pub struct SentenceBertConfig {
    pub max_seq_length: Option<usize>,
    #[serde(default)]
    pub do_lower_case: bool,
}

#[derive(Deserialize, Default)]
struct SentenceTransformersConfig {
    #[serde(default)]
    prompts: std::collections::BTreeMap<String, String>,
}

/// The prompt sentence-transformers' `encode_query` puts before a query, if the model has one
/// (config_sentence_transformers.json `prompts.query`).
pub fn query_prompt(dir: &Path, hashes: &mut Hashes) -> Result<Option<String>, EmbedError> {
    let name = "config_sentence_transformers.json";
    let Some(bytes) = read_optional(dir, name, hashes)? else {
        return Ok(None);
    };
    let config: SentenceTransformersConfig = parse_json(dir, name, &bytes)?;
    Ok(config
        .prompts
        .get("query")
        .filter(|p| !p.is_empty())
        .cloned())
}

/// tokenizer_config.json's `model_max_length`, when it is a real limit: transformers writes
/// 1e30 for "none".
pub fn tokenizer_max_length(dir: &Path, hashes: &mut Hashes) -> Result<Option<usize>, EmbedError> {
    let name = "tokenizer_config.json";
    let Some(bytes) = read_optional(dir, name, hashes)? else {
        return Ok(None);
    };
    let config: Value = parse_json(dir, name, &bytes)?;
    Ok(config
        .get("model_max_length")
        .and_then(Value::as_f64)
        .filter(|n| *n >= 1.0 && *n < 1e9)
        .map(|n| n as usize))
}

/// The revision of a model in a Hugging Face cache: `.../snapshots/<commit>/`.
pub fn revision_from_path(dir: &Path) -> Option<String> {
    let name = dir.file_name()?.to_str()?;
    let parent = dir.parent()?.file_name()?.to_str()?;
    (parent == "snapshots" && name.len() == 40 && name.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| name.to_owned())
}

/// The model id from a directory name: Hugging Face's cache `models--org--name/snapshots/x`
/// gives `org/name`; anything else its own last component.
pub fn id_from_path(dir: &Path) -> String {
    let mut components: Vec<String> = Vec::new();
    let resolved: PathBuf = dir.components().collect();
    for c in resolved.components() {
        if let Some(s) = c.as_os_str().to_str() {
            components.push(s.to_owned());
        }
    }
    let cached = components.iter().rev().find_map(|c| {
        c.strip_prefix("models--")
            .map(|rest| rest.replacen("--", "/", 1))
    });
    cached
        .or_else(|| components.last().cloned())
        .unwrap_or_else(|| dir.display().to_string())
}
