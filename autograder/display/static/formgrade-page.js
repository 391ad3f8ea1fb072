/* The formgrader's grading page, without inline scripts (its Content-Security-Policy
 * allows none): the variables nbgrader's formgrade.js reads, from this script's data
 * attributes, and what the page's inline scripts and onclick attributes did in nbgrader's
 * template (autograder/display/templates/formgrade_macros.html.j2). */
(function () {
  var data = document.currentScript.dataset;
  window.submission_id = data.submissionId;
  window.notebook_id = data.notebookId;
  window.assignment_id = data.assignmentId;
  window.base_url = data.baseUrl;

  window.toggle_name = function (on) {
    $(".name-shown").tooltip("hide");
    $(".name-hidden").tooltip("hide");
    if (on) {
      $(".name-shown").show();
      $(".name-hidden").hide();
    } else {
      $(".name-hidden").show();
      $(".name-shown").hide();
    }
  };

  $(document).ready(function () {
    $("span.glyphicon.name-hidden").tooltip(
      {title: "Show student name", placement: "bottom", trigger: "hover"});
    $("span.glyphicon.name-shown").tooltip(
      {title: "Hide student name", placement: "bottom", trigger: "hover"});
    $("[data-show-name]").on("click", function () {
      window.toggle_name($(this).data("show-name") === true);
    });
  });
})();
