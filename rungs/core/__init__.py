"""The ground floor: what every rung stands on. Nothing here imports anything above ``rungs.core``.

- ``errors``     one root for every refusal (``RungsError``) and the checks that name a bad argument
- ``text``       the one tokenizer and the one normalisation (``tokenise``, ``fts_text``)
- ``documents``  the one rule for what a document is (``check_documents``), and the text a rung reads of it
- ``retrieval``  the one calling convention: ``Hit``, ``Retriever``, ``ranking_ids``, ``check_weights``
- ``contract``   the retrieval contract as named checks, run over every retriever
- ``replies``    reading what a model wrote: the one JSON-reply parser
- ``claims``     an answer's claims checked: quotes found word for word, sentences, the whole check (``faults``)
- ``figures``    the one reading of a figure (« 48 h » is « quarante-huit heures »), for the checks and the mark
- ``display``    the one way a ranking is shown
- ``paths``      every place rungs reads or writes, every ``RUNGS_*`` setting
- ``secrets``    the one redaction: no key is ever printed
"""
