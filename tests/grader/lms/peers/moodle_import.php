<?php
// Reads the files the grader writes for Moodle as Moodle's own importers read them, with
// PHP's fgetcsv, which Moodle's csv_import_reader uses; the steps around it follow
// lib/csvlib.class.php (load_csv_content), mod/assign/feedback/offline/importgradeslib.php
// (init, next) and mod/assign/feedback/file/importziplib.php (is_valid_filename_for_import),
// Moodle 4.5, line by line. Written for this course's tests, not copied from Moodle.
//
//   php moodle_import.php worksheet FILE STRINGS_JSON   -> {"rows": {participant: {...}}}
//   php moodle_import.php zip NAMES_JSON                 -> {"files": {name: participant}}

function load_csv_content(string $content, string $delimiter): array {
    // core_text::trim_utf8_bom; fix mac/dos newlines; trim.
    if (strncmp($content, "\xEF\xBB\xBF", 3) === 0) {
        $content = substr($content, 3);
    }
    $content = preg_replace('!\r\n?!', "\n", $content);
    $content = trim($content);
    $fp = fopen('php://temp', 'w+b');
    fwrite($fp, $content);
    fseek($fp, 0);
    $columns = array();
    while ($fgetdata = fgetcsv($fp, 0, $delimiter, '"', '\\')) {
        if (count($fgetdata) == 1) {
            if ($fgetdata[0] !== null) {
                $columns[] = $fgetdata;
            }
        } else {
            $columns[] = $fgetdata;
        }
    }
    if (!isset($columns[0])) {
        throw new Exception('csvemptyfile');
    }
    $count = count($columns[0]);
    foreach ($columns as $row) {
        if (count($row) !== $count) {
            throw new Exception('csvweirdcolumns');
        }
    }
    return $columns;
}

function worksheet(string $path, array $strings): array {
    $columns = load_csv_content(file_get_contents($path), $strings['delimiter']);
    $header = array_shift($columns);
    $gradeindex = $idindex = $modifiedindex = -1;
    $feedbackindex = null;
    foreach ($header as $index => $column) {
        if ($column == $strings['feedback']) { $feedbackindex = $index; }
        if ($column == $strings['gradenoun']) { $gradeindex = $index; }
        if ($column == $strings['recordid']) { $idindex = $index; }
        if ($column == $strings['lastmodifiedgrade']) { $modifiedindex = $index; }
    }
    if ($idindex < 0 || $gradeindex < 0 || $modifiedindex < 0) {
        throw new Exception('invalidgradeimport');
    }
    $rows = array();
    foreach ($columns as $record) {
        // "Strip the integer from the end of the participant string."
        $id = substr($record[$idindex], strlen($strings['hiddenuser']));
        $rows[$id] = array(
            'grade' => $record[$gradeindex],
            'modified' => $record[$modifiedindex],
            'feedback' => empty($feedbackindex) ? null : $record[$feedbackindex],
        );
    }
    return array('rows' => $rows);
}

function zip_names(array $names): array {
    $files = array();
    foreach ($names as $name) {
        $participant = null;
        foreach (explode('/', $name) as $pathpart) {
            $info = explode('_', $pathpart, 5);
            if (count($info) < 4) { continue; }
            if (!is_numeric($info[1])) { continue; }
            if ($info[2] !== 'assignsubmission' || $info[3] !== 'file') { continue; }
            $participant = $info[1];
            break;
        }
        $files[$name] = $participant;
    }
    return array('files' => $files);
}

try {
    if ($argv[1] === 'worksheet') {
        $result = worksheet($argv[2], json_decode(file_get_contents($argv[3]), true));
    } else {
        $result = zip_names(json_decode(file_get_contents($argv[2]), true));
    }
} catch (Exception $error) {
    $result = array('error' => $error->getMessage());
}
echo json_encode($result, JSON_UNESCAPED_UNICODE);
