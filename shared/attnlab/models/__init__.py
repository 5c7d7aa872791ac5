"""The course's two trainable models, side by side: lesson 07's ``tiny`` (decoder-only, reverses
digits) and lesson 08's ``translator`` (encoder-decoder, numbers to words). Each module holds a
model, its size and its checkpoint; the data, training and decoding live in their own modules
(``reversal_data``, ``number_data``, ``training``, ``decoding``); ``attnlab.tiny`` and
``attnlab.translator`` gather each lesson's names in one place."""
