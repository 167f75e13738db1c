"""BERT (Devlin et al. 2019; notebook 09), bottom to top.

* :mod:`~coursekit.bert.model` — the encoder with MLM and NSP heads, and its Hugging Face importer;
* :mod:`~coursekit.bert.objectives` — masking (80/10/10), next-sentence pairs, the pre-training loss;
* :mod:`~coursekit.bert.electra` — ELECTRA's replaced-token detection (Clark et al. 2020): a small generator,
  the BERT as discriminator, their shared embeddings and the joint loss;
* :mod:`~coursekit.bert.heads` — using a BERT: sentence batches, classification heads, fine-tuning, features;
* :mod:`~coursekit.bert.sst2` — the SST-2 fine-tuning protocol (which sentences train, choose, test);
* :mod:`~coursekit.bert.corpus` — the pre-training recipe and its corpus (WikiText-2, IMDB reviews, SST-2);
* :mod:`~coursekit.bert.checkpoint` — the committed model directory and the MiniLM checkpoint;
* :mod:`~coursekit.bert.pretraining` — the resumable pre-training run;
* :mod:`~coursekit.bert.finetuning` — pre-trained vs random init on SST-2;
* ``python -m coursekit.bert`` (:mod:`~coursekit.bert.__main__`) — ``sst2``, ``pretrain``, ``compare``.
"""
