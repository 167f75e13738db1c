"""BART (Lewis et al. 2020; notebook 11), bottom to top.

* :mod:`~coursekit.bart.noising` — the five noising functions of §2.2;
* :mod:`~coursekit.bart.batches` — sequence-to-sequence batches, teacher forcing, the denoising loss;
* :mod:`~coursekit.bart.model` — the encoder–decoder and its Hugging Face importer;
* :mod:`~coursekit.bart.heads` — the sequence-classification head of §3.1;
* :mod:`~coursekit.bart.corpus` — the recipe, the shared vocabulary and the pre-training corpus;
* :mod:`~coursekit.bart.pretraining` — corruption, denoising accuracy, the resumable run, the export;
* :mod:`~coursekit.bart.finetuning` — pre-trained vs random init on EN→FR and SST-2;
* ``python -m coursekit.bart`` (:mod:`~coursekit.bart.__main__`) — ``denoise``, ``pretrain``, ``compare``, ``merge``.
"""
