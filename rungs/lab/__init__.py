"""The lab: what the rungs are measured with, and how.

- ``handbook``  the pages and the judged questions (``data/handbook/``, shipped with the package)
- ``cacm``      a real judged English collection with a published BM25 score (``data/cacm/``)
- ``metrics``   MRR, recall, precision, AP, nDCG, answer@4, judged@k; the paired test, bootstrap intervals, Holm;
                a share's Wilson interval
- ``answers``   the answer mark: key facts (stems, numbers, units), abstention, citations, right and cited
- ``judges``    N4's typed questions about N3's answers (support, same as the reference)
- ``questions`` known-item questions for a collection nobody has judged
- ``tuning``    splits, sweeps, the protocol (``choose``, ``decide``: cross-validated, a final half scored once), plots
- ``sending``   what N3's two sending knobs put in the prompt, swept without a model
- ``compare``   two systems side by side, question by question, with the paired test
- ``abstention`` the stored abstention runs read for notebook 03 (baselines, losses, the gate's table and plots);
                ``abstention_summary`` finds and checks their summary file
- ``folder_default`` the stored folder-default measurement (issue 39) read as tables for notebooks 02 and 07:
                candidates × collection/kind, every question's hits, the questions no candidate finds
- ``capstone``  notebook 09's steps on a folder and questions of one's own: a refusal that says what to change,
                or the result that is defined (no question names a page: page recall is not defined)
"""
