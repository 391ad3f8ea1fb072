"""How alike students' work is, from its text alone: code never runs, nothing is read here.

Code is parsed (never executed) and reduced to what a copier cannot cheaply change
(:mod:`.code`); written answers are reduced to their content words, Chinese segmented
with jieba (:mod:`.prose`); both become sets of hashed fragments (*fingerprints*, with
where each came from: :mod:`.fingerprints`), and :mod:`.scoring` compares every pair
of submissions, each fragment weighed by how rare it is in the class, and sets the bar a
pair must pass to be flagged from the class's own scores. Reading submissions and writing
results is the command's job (:mod:`autograder.commands.similarity`).
"""
