"""Your own folder: every file read with the library made for its format, and an index on disk.

- ``readers``  one file → one document, one module a format family (text and Markdown, HTML and EPUB,
               PDF, Word / OpenDocument / PowerPoint)
- ``walk``     a folder → the files to read, and the ones not to read, with the reason
- ``report``   what one indexing run did
- ``store``    the index's SQLite file; ``update``: one run over the folder
- ``keywords`` BM25's word counts, stored by ``index`` and loaded by a search
- ``encoding`` the passages' vectors made on every core, by a pool of worker processes
- ``index``    ``index_folder``, ``open_index``, ``FolderIndex``: the SQLite index, kept up to date,
               and a retriever of every rung over it
"""
