"""The learning-management systems' side: their file names, files and deadlines.

Canvas and Moodle hand submissions out as a download and take grades and feedback back as
files they import. This layer reads and writes those files exactly as the systems' own
exporters and importers do, and nothing else: who a handed-in file belongs to
(:mod:`.handed_in`), the course's record of each student's LMS identity (:mod:`.roster`),
deadlines and the late policy (:mod:`.deadlines`), the LMSs' CSV files kept byte for byte
(:mod:`.table`), Canvas's gradebook (:mod:`.canvas`), Moodle's grading worksheet and
gradebook import (:mod:`.moodle`), and the zips of feedback files both take back
(:mod:`.feedback_zips`). It imports only the course layer.
"""
