//! BERT's forward pass for sentence embeddings: the arithmetic of candle-transformers'
//! `BertModel` (and of transformers' `BertModel` in eval mode), laid out for speed on a CPU.
//!
//! * The texts of a batch are packed one after another, `(tokens, hidden)`, instead of padded
//!   to the longest: nothing is computed for padding. Every step but attention treats each
//!   token alone, so packing changes no figure; attention runs per text, over that text's own
//!   tokens, which is what the padded version's mask does (its `f32::MIN` bias makes the
//!   padding's probabilities exactly 0).
//! * Attention is one kernel ([`Attention`]): per text and head, `q·kᵀ` scaled, softmax in
//!   place, `·v` written straight into the context's columns. The padded version made six
//!   tensors of `batch × heads × len × len` floats per layer (100 MB each at 32 × 256 tokens):
//!   scores, scaled, masked, and three for the softmax; their allocation, page faults and
//!   memory traffic cost more than the matrix products.
//! * Query, key and value are one matrix product (their weights concatenated).
//! * The dense layers keep their weights transposed, `(in, out)` row-major ([`Dense`]).
//!   gemm computes a row-major product as its transpose, so torch's `(out, in)` layout made
//!   it re-pack the whole weight matrix at every product by strided scalar loads: half of a
//!   query's time. Stored transposed, the packing reads contiguous columns.

use candle_core::{
    CpuStorage, CustomOp1, Device, InplaceOp1, Layout, Module, Result, Shape, Tensor,
};
use candle_nn::{LayerNorm, VarBuilder};
use candle_transformers::models::bert::{Config, HiddenAct};
use rayon::prelude::{IntoParallelIterator, ParallelIterator, ParallelSliceMut};

pub(crate) struct Bert {
    word_embeddings: Tensor,
    position_embeddings: Tensor,
    /// Row 0 of the token type table: every text is one segment.
    token_type: Tensor,
    embeddings_norm: LayerNorm,
    layers: Vec<Layer>,
    heads: usize,
    act: HiddenAct,
}

struct Layer {
    qkv: Dense,
    attention_output: Dense,
    attention_norm: LayerNorm,
    intermediate: Dense,
    output: Dense,
    output_norm: LayerNorm,
}

/// A dense layer, `x · Wᵀ + b` as torch's `Linear`, its weight kept as `Wᵀ`: `(in, out)`,
/// contiguous (see the module's notes).
struct Dense {
    weight_t: Tensor,
    bias: Tensor,
}

impl Dense {
    /// From torch's `(out, in)` weight and its bias.
    fn new(weight: &Tensor, bias: Tensor) -> Result<Self> {
        Ok(Self {
            weight_t: weight.t()?.contiguous()?,
            bias,
        })
    }

    /// The layer `prefix` of `vb` (`weight` and `bias`), `inputs` wide to `outputs`.
    fn load(vb: VarBuilder, inputs: usize, outputs: usize) -> Result<Self> {
        let weight = vb.get((outputs, inputs), "weight")?;
        Self::new(&weight, vb.get(outputs, "bias")?)
    }
}

impl Module for Dense {
    /// `x` is `(tokens, in)`.
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        x.matmul(&self.weight_t)?.broadcast_add(&self.bias)
    }
}

impl Bert {
    /// Loads the weights as candle-transformers does: at the root, else under the model type
    /// (`bert.embeddings…`).
    pub(crate) fn load(vb: VarBuilder, config: &Config) -> Result<Self> {
        match Self::load_at(vb.clone(), config) {
            Ok(bert) => Ok(bert),
            Err(error) => match &config.model_type {
                Some(prefix) => Self::load_at(vb.pp(prefix), config).map_err(|_| error),
                None => Err(error),
            },
        }
    }

    fn load_at(vb: VarBuilder, config: &Config) -> Result<Self> {
        let hidden = config.hidden_size;
        let heads = config.num_attention_heads;
        if heads == 0 || !hidden.is_multiple_of(heads) {
            candle_core::bail!(
                "hidden_size {hidden} is not a multiple of num_attention_heads {heads}"
            );
        }
        let eps = config.layer_norm_eps;
        let emb = vb.pp("embeddings");
        let word_embeddings = emb
            .pp("word_embeddings")
            .get((config.vocab_size, hidden), "weight")?;
        let position_embeddings = emb
            .pp("position_embeddings")
            .get((config.max_position_embeddings, hidden), "weight")?;
        let token_type = emb
            .pp("token_type_embeddings")
            .get((config.type_vocab_size, hidden), "weight")?
            .get(0)?;
        let embeddings_norm = candle_nn::layer_norm(hidden, eps, emb.pp("LayerNorm"))?;
        let layers = (0..config.num_hidden_layers)
            .map(|i| Layer::load(vb.pp(format!("encoder.layer.{i}")), config))
            .collect::<Result<Vec<_>>>()?;
        Ok(Self {
            word_embeddings,
            position_embeddings,
            token_type,
            embeddings_norm,
            layers,
            heads,
            act: config.hidden_act,
        })
    }

    /// The last hidden state of every token of every text, packed: `(Σ lengths, hidden)`, the
    /// rows of text `i` after those of texts `0..i`. Texts must not be empty.
    pub(crate) fn forward(&self, texts: &[&[u32]]) -> Result<Tensor> {
        let device = Device::Cpu;
        let lens: Vec<usize> = texts.iter().map(|ids| ids.len()).collect();
        let tokens: usize = lens.iter().sum();
        let ids: Vec<u32> = texts.iter().flat_map(|ids| ids.iter().copied()).collect();
        let mut positions = Vec::with_capacity(tokens);
        for &len in &lens {
            let len = u32::try_from(len).map_err(candle_core::Error::wrap)?;
            positions.extend(0..len);
        }
        let ids = Tensor::from_vec(ids, tokens, &device)?;
        let positions = Tensor::from_vec(positions, tokens, &device)?;
        // As candle-transformers and transformers: (word + token type) + position.
        let x = self
            .word_embeddings
            .index_select(&ids, 0)?
            .broadcast_add(&self.token_type)?;
        let x = (x + self.position_embeddings.index_select(&positions, 0)?)?;
        let mut x = self.embeddings_norm.forward(&x)?;
        let attention = Attention {
            lens: &lens,
            heads: self.heads,
        };
        for layer in &self.layers {
            let context = layer.qkv.forward(&x)?.apply_op1_no_bwd(&attention)?;
            let attended = (layer.attention_output.forward(&context)? + &x)?;
            let attended = layer.attention_norm.forward(&attended)?;
            let inner = layer.intermediate.forward(&attended)?;
            let inner = match self.act {
                HiddenAct::Gelu => {
                    // In place: `inner` is this loop's own, fresh from the matrix product.
                    inner.inplace_op1(&GeluErf)?;
                    inner
                }
                HiddenAct::GeluApproximate => inner.gelu()?,
                HiddenAct::Relu => inner.relu()?,
            };
            let out = (layer.output.forward(&inner)? + &attended)?;
            x = layer.output_norm.forward(&out)?;
        }
        Ok(x)
    }
}

impl Layer {
    fn load(vb: VarBuilder, config: &Config) -> Result<Self> {
        let hidden = config.hidden_size;
        let eps = config.layer_norm_eps;
        let attention = vb.pp("attention.self");
        let mut weights = Vec::with_capacity(3);
        let mut biases = Vec::with_capacity(3);
        for name in ["query", "key", "value"] {
            let vb = attention.pp(name);
            weights.push(vb.get((hidden, hidden), "weight")?);
            biases.push(vb.get(hidden, "bias")?);
        }
        let qkv = Dense::new(&Tensor::cat(&weights, 0)?, Tensor::cat(&biases, 0)?)?;
        Ok(Self {
            qkv,
            attention_output: Dense::load(vb.pp("attention.output.dense"), hidden, hidden)?,
            attention_norm: candle_nn::layer_norm(
                hidden,
                eps,
                vb.pp("attention.output.LayerNorm"),
            )?,
            intermediate: Dense::load(
                vb.pp("intermediate.dense"),
                hidden,
                config.intermediate_size,
            )?,
            output: Dense::load(vb.pp("output.dense"), config.intermediate_size, hidden)?,
            output_norm: candle_nn::layer_norm(hidden, eps, vb.pp("output.LayerNorm"))?,
        })
    }
}

/// Self-attention over packed texts: input `(tokens, 3 × hidden)`, query, key and value side
/// by side; output the context `(tokens, hidden)`, heads side by side. Each text attends to its
/// own tokens only.
struct Attention<'a> {
    lens: &'a [usize],
    heads: usize,
}

/// A raw pointer that may cross threads: each unit of work writes its own cells.
#[derive(Clone, Copy)]
struct SendPtr(*mut f32);
// SAFETY: the units write disjoint cells (see `Attention::cpu_fwd`), and the buffer outlives
// the parallel loop.
unsafe impl Send for SendPtr {}
unsafe impl Sync for SendPtr {}

impl SendPtr {
    /// The pointer; a method, so that closures capture the `SendPtr`, not its field.
    fn get(self) -> *mut f32 {
        self.0
    }
}

impl CustomOp1 for Attention<'_> {
    fn name(&self) -> &'static str {
        "bert-attention"
    }

    fn cpu_fwd(&self, storage: &CpuStorage, layout: &Layout) -> Result<(CpuStorage, Shape)> {
        let CpuStorage::F32(data) = storage else {
            candle_core::bail!("bert-attention: f32 only");
        };
        let (tokens, width) = layout.shape().dims2()?;
        let hidden = width / 3;
        let head_dim = hidden / self.heads.max(1);
        if width != 3 * hidden || head_dim * self.heads != hidden || head_dim == 0 {
            candle_core::bail!("bert-attention: width {width} for {} heads", self.heads);
        }
        if self.lens.iter().sum::<usize>() != tokens {
            candle_core::bail!("bert-attention: the lengths do not add up to {tokens} tokens");
        }
        let qkv = layout
            .contiguous_offsets()
            .and_then(|(start, end)| data.get(start..end))
            .ok_or_else(|| candle_core::Error::Msg("bert-attention: not contiguous".into()))?;
        let mut starts = Vec::with_capacity(self.lens.len());
        let mut start = 0;
        for &len in self.lens {
            starts.push(start);
            start += len;
        }
        let units: Vec<(usize, usize, usize)> = starts
            .iter()
            .zip(self.lens)
            .filter(|(_, &len)| len > 0)
            .flat_map(|(&start, &len)| (0..self.heads).map(move |head| (start, len, head)))
            .collect();
        // As candle-transformers: scores × (1 / √head_dim), that factor rounded to f32.
        let scale = (1.0 / (head_dim as f64).sqrt()) as f32;
        let mut out = vec![0f32; tokens * hidden];
        let out_ptr = SendPtr(out.as_mut_ptr());
        let qkv_ptr = qkv.as_ptr() as usize;
        let width = width as isize;
        let hidden_i = hidden as isize;
        units.into_par_iter().for_each_init(
            Vec::new,
            |scores: &mut Vec<f32>, (start, len, head)| {
                scores.clear();
                scores.resize(len * len, 0.0);
                let q_offset = start * 3 * hidden + head * head_dim;
                let len_i = len as isize;
                // SAFETY: q, k and v of this text and head are `len` rows of `head_dim` floats,
                // `width` apart, inside `qkv` (the shape was checked above: rows
                // `start..start + len` of `tokens`, columns `head × head_dim` of each third);
                // `scores` holds `len × len` floats; the context cells written are rows
                // `start..start + len`, columns `head × head_dim..(head + 1) × head_dim` of
                // `out`, which no other unit writes. gemm runs on this thread only.
                unsafe {
                    let q = (qkv_ptr as *const f32).add(q_offset);
                    let k = q.add(hidden);
                    let v = q.add(2 * hidden);
                    gemm::gemm(
                        len,
                        len,
                        head_dim,
                        scores.as_mut_ptr(),
                        1,
                        len_i,
                        false,
                        q,
                        1,
                        width,
                        k,
                        width,
                        1,
                        0.0,
                        scale,
                        false,
                        false,
                        false,
                        gemm::Parallelism::None,
                    );
                    for row in scores.chunks_exact_mut(len) {
                        softmax_in_place(row);
                    }
                    gemm::gemm(
                        len,
                        head_dim,
                        len,
                        out_ptr.get().add(start * hidden + head * head_dim),
                        1,
                        hidden_i,
                        false,
                        scores.as_ptr(),
                        1,
                        len_i,
                        v,
                        1,
                        width,
                        0.0,
                        1.0,
                        false,
                        false,
                        false,
                        gemm::Parallelism::None,
                    );
                }
            },
        );
        Ok((CpuStorage::F32(out), Shape::from((tokens, hidden))))
    }
}

/// `softmax` as candle's: `exp(x - max) / Σ exp(x - max)`, with [`exp`] and a sum in eight
/// lanes, which the compiler vectorizes (libm's `expf` is a call per element).
fn softmax_in_place(row: &mut [f32]) {
    let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    for x in row.iter_mut() {
        *x = exp(*x - max);
    }
    let mut lanes = [0f32; 8];
    let mut chunks = row.chunks_exact(8);
    for chunk in &mut chunks {
        for (lane, x) in lanes.iter_mut().zip(chunk) {
            *lane += x;
        }
    }
    let sum = lanes.iter().sum::<f32>() + chunks.remainder().iter().sum::<f32>();
    for x in row.iter_mut() {
        *x /= sum;
    }
}

/// `eˣ` within 2 ulp (Cephes' `expf`: `2ⁿ · e^r`, `r` in ±ln 2 / 2, a degree-6 polynomial),
/// branch-free so that loops over it vectorize; inputs are clamped to f32's normal range.
#[inline(always)]
fn exp(x: f32) -> f32 {
    let x = x.clamp(-87.336_54, 88.722_83);
    // Round x / ln 2 to the nearest integer by adding and taking away 1.5 × 2²³.
    let n = (x * std::f32::consts::LOG2_E + 12_582_912.0) - 12_582_912.0;
    // ln 2 in two parts, so that r = x - n ln 2 is exact enough.
    let r = x - n * 0.693_359_4 + n * 2.121_944_4e-4;
    let p = 1.987_569_1e-4_f32;
    let p = p * r + 1.398_199_9e-3;
    let p = p * r + 8.333_452e-3;
    let p = p * r + 4.166_579_6e-2;
    let p = p * r + 1.666_666_5e-1;
    let p = p * r + 0.5;
    let e = p * r * r + r + 1.0;
    // 2ⁿ from its exponent bits; n is in -126..=128 after the clamp, and 2¹²⁸ never arises
    // because e < 1.5 there (the product is then at most f32::MAX).
    let n = n as i32;
    let scale = f32::from_bits(((n.clamp(-126, 127) + 127) as u32) << 23);
    e * scale * if n > 127 { 2.0 } else { 1.0 }
}

/// GELU with the exact `erf` (transformers' `gelu`): `x/2 · (1 + erf(x/√2))`, with [`erf`].
struct GeluErf;

impl InplaceOp1 for GeluErf {
    fn name(&self) -> &'static str {
        "gelu-erf"
    }

    fn cpu_fwd(&self, storage: &mut CpuStorage, layout: &Layout) -> Result<()> {
        let CpuStorage::F32(data) = storage else {
            candle_core::bail!("gelu-erf: f32 only");
        };
        let values = layout
            .contiguous_offsets()
            .and_then(|(start, end)| data.get_mut(start..end))
            .ok_or_else(|| candle_core::Error::Msg("gelu-erf: not contiguous".into()))?;
        values.par_chunks_mut(16 * 1024).for_each(|chunk| {
            for x in chunk {
                // As candle's gelu_erf: (erf(x / √2) + 1) · 0.5 · x.
                *x = (erf(*x * std::f32::consts::FRAC_1_SQRT_2) + 1.0) * 0.5 * *x;
            }
        });
        Ok(())
    }
}

/// `erf` within a few ulp (Eigen's and XLA's single-precision rational approximation on
/// [-4, 4], where erf reaches ±1 in f32), branch-free so that loops over it vectorize.
#[inline(always)]
fn erf(x: f32) -> f32 {
    let x = x.clamp(-4.0, 4.0);
    let x2 = x * x;
    let p = -2.726_142_3e-10_f32;
    let p = p * x2 + 2.770_681_4e-8;
    let p = p * x2 + -2.101_024e-6;
    let p = p * x2 + -5.692_506_4e-5;
    let p = p * x2 + -7.349_906_3e-4;
    let p = p * x2 + -2.954_600_1e-3;
    let p = p * x2 + -1.609_603_3e-2;
    let q = -1.456_607_2e-5_f32;
    let q = q * x2 + -2.133_740_6e-4;
    let q = q * x2 + -1.682_827e-3;
    let q = q * x2 + -7.373_329e-3;
    let q = q * x2 + -1.426_474e-2;
    x * p / q
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_is_within_two_ulp_of_libm() {
        let mut worst = 0f32;
        for i in -87_000..=88_000 {
            let x = i as f32 / 1000.0 + 0.000_37;
            let want = x.exp();
            let got = exp(x);
            worst = worst.max((got - want).abs() / want);
        }
        assert!(worst < 2.5 * f32::EPSILON, "worst relative error {worst}");
        assert_eq!(exp(-1000.0), (-87.336_54f32).exp());
        assert!(exp(0.0) == 1.0);
    }

    #[test]
    fn erf_is_close_to_libm() {
        let mut worst = 0f32;
        for i in -6_000..=6_000 {
            let x = i as f32 / 1000.0 + 0.000_37;
            let want = candle_core::cpu::erf::erf_f32(x);
            worst = worst.max((erf(x) - want).abs());
        }
        assert!(worst < 4.0 * f32::EPSILON, "worst absolute error {worst}");
        assert_eq!(erf(0.0), 0.0);
    }

    /// The packed forward pass against candle-transformers' padded `BertModel`, hidden state by
    /// hidden state, for texts of mixed lengths in one batch.
    #[test]
    fn same_hidden_states_as_candle_transformers_bert() {
        use candle_core::DType;
        use candle_transformers::models::bert::BertModel;

        for name in ["tiny-bert", "tiny-bert-cls"] {
            let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../fixtures/models")
                .join(name);
            let bytes = std::fs::read(dir.join("config.json")).unwrap();
            let config = crate::files::bert_config(&dir, &bytes).unwrap();
            let weights = std::fs::read(dir.join("model.safetensors")).unwrap();
            let vb =
                VarBuilder::from_buffered_safetensors(weights, DType::F32, &Device::Cpu).unwrap();
            let ours = Bert::load(vb.clone(), &config).unwrap();
            let theirs = BertModel::load(vb, &config).unwrap();
            let texts: Vec<Vec<u32>> = [9usize, 1, 17, 4]
                .iter()
                .map(|&len| {
                    (0..len as u32)
                        .map(|i| 2 + (i * 7 + len as u32) % 150)
                        .collect()
                })
                .collect();
            let slices: Vec<&[u32]> = texts.iter().map(Vec::as_slice).collect();
            let packed = ours.forward(&slices).unwrap().to_vec2::<f32>().unwrap();

            let longest = 17;
            let mut ids = Vec::new();
            let mut mask = Vec::new();
            for text in &texts {
                ids.extend(
                    text.iter()
                        .copied()
                        .chain(std::iter::repeat(0))
                        .take(longest),
                );
                mask.extend((0..longest).map(|i| u32::from(i < text.len())));
            }
            let ids = Tensor::from_vec(ids, (texts.len(), longest), &Device::Cpu).unwrap();
            let mask = Tensor::from_vec(mask, (texts.len(), longest), &Device::Cpu).unwrap();
            let padded = theirs
                .forward(&ids, &ids.zeros_like().unwrap(), Some(&mask))
                .unwrap()
                .to_vec3::<f32>()
                .unwrap();
            let mut rows = packed.iter();
            let mut worst = 0f32;
            for (text, hidden) in texts.iter().zip(&padded) {
                for want in hidden.iter().take(text.len()) {
                    let got = rows.next().unwrap();
                    for (g, w) in got.iter().zip(want) {
                        worst = worst.max((g - w).abs());
                    }
                }
            }
            assert!(rows.next().is_none());
            assert!(worst < 1e-5, "{name}: worst difference {worst}");
        }
    }

    /// A dense layer is torch's `Linear` (`x · Wᵀ + b`), its weight stored `(in, out)`
    /// row-major: the layout gemm reads without gathering (see the module's notes).
    #[test]
    fn dense_layers_keep_their_weights_transposed() {
        let (inputs, outputs) = (5usize, 3usize);
        let w: Vec<f32> = (0..inputs * outputs)
            .map(|i| i as f32 * 0.25 - 1.0)
            .collect();
        let weight = Tensor::from_vec(w.clone(), (outputs, inputs), &Device::Cpu).unwrap();
        let bias = Tensor::new(&[0.5f32, -1.0, 2.0], &Device::Cpu).unwrap();
        let dense = Dense::new(&weight, bias).unwrap();
        assert_eq!(dense.weight_t.dims(), [inputs, outputs]);
        assert!(dense.weight_t.is_contiguous());
        let x: Vec<f32> = (0..2 * inputs).map(|i| (i as f32).sin()).collect();
        let got = dense
            .forward(&Tensor::from_vec(x.clone(), (2, inputs), &Device::Cpu).unwrap())
            .unwrap()
            .to_vec2::<f32>()
            .unwrap();
        for (row, got) in x.chunks(inputs).zip(&got) {
            for (o, g) in got.iter().enumerate() {
                let want: f32 = [0.5f32, -1.0, 2.0][o]
                    + row
                        .iter()
                        .zip(&w[o * inputs..(o + 1) * inputs])
                        .map(|(a, b)| a * b)
                        .sum::<f32>();
                assert!((g - want).abs() < 1e-5, "{g} vs {want}");
            }
        }
    }

    #[test]
    fn softmax_sums_to_one_and_keeps_order() {
        let mut row: Vec<f32> = (0..37).map(|i| (i as f32 * 0.7).sin() * 9.0).collect();
        let want: Vec<f32> = {
            let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let e: Vec<f32> = row.iter().map(|x| (x - max).exp()).collect();
            let sum: f32 = e.iter().sum();
            e.iter().map(|x| x / sum).collect()
        };
        softmax_in_place(&mut row);
        for (got, want) in row.iter().zip(&want) {
            assert!((got - want).abs() < 1e-6, "{got} vs {want}");
        }
    }
}
