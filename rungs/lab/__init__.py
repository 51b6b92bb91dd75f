"""The lab: what the rungs are measured with, and how.

- ``handbook``  the pages and the judged questions (``data/handbook/``, shipped with the package)
- ``cacm``      a real judged English collection with a published BM25 score (``data/cacm/``)
- ``metrics``   MRR, recall, precision, AP, nDCG; the paired test, bootstrap intervals, Holm
- ``answers``   the answer mark: key facts, abstention, citations
- ``judges``    N4's typed questions about N3's answers (support, same as the reference)
- ``questions`` known-item questions for a collection nobody has judged
- ``tuning``    splits, sweeps, the held-out protocol, and their plots
"""
