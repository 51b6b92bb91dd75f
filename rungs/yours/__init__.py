"""Your own folder: every file read with the library made for its format, and an index on disk.

- ``readers``  one file → one document (Markdown, text, HTML, PDF, Word)
- ``walk``     a folder → the files to read, and the ones not to read, with the reason
- ``report``   what one indexing run did
- ``index``    ``index_folder``, ``open_index``, ``FolderIndex``: the SQLite index, kept up to date,
               and a retriever of every rung over it
"""
