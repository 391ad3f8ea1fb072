# Reads the files the grader writes for Canvas as Canvas's own importers read them, with
# Ruby's CSV library, which Canvas's GradebookImporter uses; the steps around it follow
# lib/gradebook_importer.rb (identify_delimiter, header?, Assignment.title_and_id,
# check_for_non_student_row, the decimal_comma_to_period converter) and app/models/
# assignment.rb (infer_comment_context_from_filename). Written for this course's tests, not
# copied from Canvas.
#
#   ruby canvas_import.rb gradebook FILE   -> {"assignments": [...], "students": {...}}
#   ruby canvas_import.rb reupload NAMES   -> {"files": {name: [user id, attachment id]}}
require "csv"
require "json"

NON_ASSIGNMENT = /Current Score|Current Points|Current Grade|Final Score|Final Points|Final Grade|Override Score|Override Grade|Override Status/
RESERVED = ["Student", "LastName", "FirstName", "ID", "SIS User ID", "SIS Login ID", "Section",
            "Integration ID", "Root Account"]

def identify_delimiter(lines)
  counts = [",", ";"].to_h do |separator|
    widths = lines.map { |line| CSV.parse_line(line, col_sep: separator)&.length || 0 }
    [separator, widths.uniq.length == 1 ? widths.first : 0]
  end
  counts[";"] > counts[","] ? ";" : ","
end

def decimal_comma_to_period(field)
  return field unless field.is_a?(String) && field =~ /^-?[0-9.,]+%?$/
  last = [field.rindex(","), field.rindex(".")].compact.max
  return field if last.nil?
  field[0...last].delete(",.") + "." + field[(last + 1)..]
end

def gradebook(path)
  content = File.read(path, encoding: "UTF-8")
  separator = identify_delimiter(content.lines.first(3))
  rows = CSV.parse(content, col_sep: separator, skip_lines: /^[;, ]+$/)
  header = rows.shift
  raise "invalid header row" unless header.length > 3 && header[0].include?("Student") &&
                                    header[1].include?("ID")
  section = header.index { |h| h.include?("Section") } or raise "invalid header row"
  assignments = {}
  header.each_with_index do |name, index|
    next if index <= section || RESERVED.include?(name) || name =~ NON_ASSIGNMENT
    assignments[index] = name =~ /\A(.*)\s\((\d+)\)\z/ ? [$1, $2] : [name, nil]
  end
  points, students = {}, {}
  rows.each do |row|
    if row[0]&.include?("Points Possible")
      assignments.each_key { |i| points[assignments[i].join("|")] = decimal_comma_to_period(row[i]) }
      next
    end
    next if row.compact.all? { |cell| cell =~ /^\s*(Muted|Manual Posting.*)?\s*$/i }
    students[row[1]] = assignments.to_h do |i, (title, id)|
      grade = decimal_comma_to_period(row[i]&.strip)
      grade = "EX" if grade.to_s.casecmp?("EX")
      ["#{title}|#{id}", grade]
    end
  end
  { "assignments" => assignments.values, "points" => points, "students" => students }
end

def reupload(names)
  files = names.to_h do |name|
    split = File.basename(name).split("_") - ["LATE"]
    if split.first == "anon"
      [name, ["anon", *split[1, 2]]]
    else
      [name, split.grep(/^\d+$/).take(2)]
    end
  end
  { "files" => files }
end

result = begin
  ARGV[0] == "gradebook" ? gradebook(ARGV[1]) : reupload(JSON.parse(File.read(ARGV[1])))
rescue StandardError => e
  { "error" => e.message }
end
puts JSON.generate(result)
