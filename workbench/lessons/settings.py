"""The lessons page's settings table: which lesson, which step."""
from __future__ import annotations

from dataclasses import dataclass

from workbench.common.links import ChoiceParam, IntParam, LinkSchema, Widget
from workbench.lessons.catalog import LESSONS


@dataclass(frozen=True)
class LessonSettings:
    lesson: str = LESSONS[0].key
    step: int = 1


TABLE: LinkSchema[LessonSettings] = LinkSchema(LessonSettings, [
    ChoiceParam("lesson", [lesson.key for lesson in LESSONS], label="Lesson",
                help="Which lesson: " + ", ".join(f"`{lesson.key}` ({lesson.title})" for lesson in LESSONS),
                meaning="which lesson",
                widget=Widget("segmented", choice_labels={lesson.key: lesson.title for lesson in LESSONS})),
    IntParam("step", 1, max(len(lesson.steps) for lesson in LESSONS), label="Step",
             help="Which step of the lesson, from 1."),
])
