"""The forum, for every campaign not played on blogs: scenes (threads) and posts, whispers,
edits with history, watching, the GM's start and end, and the export.

One name for the pages, the API and the tests to import; the code lives by concern:
visibility (who sees what), drafts (a post as submitted, its preview), threads (reading
and watching), posts (writing), post_mail (the mail a post causes), gm (start and end)
and export.
"""

from __future__ import annotations

# The tables, as some callers reach them through this module.
from pbp.models.forum import Post as Post
from pbp.models.forum import Thread as Thread
from pbp.services.forum import rolls as rolls
from pbp.services.forum.drafts import AUDIENCES as AUDIENCES
from pbp.services.forum.drafts import KINDS as KINDS
from pbp.services.forum.drafts import MAX_TITLE as MAX_TITLE
from pbp.services.forum.drafts import Draft as Draft
from pbp.services.forum.drafts import preview as preview
from pbp.services.forum.drafts import strip_roll_lines as strip_roll_lines
from pbp.services.forum.drafts import typed_body as typed_body
from pbp.services.forum.export import export_forum as export_forum
from pbp.services.forum.gm import end_campaign as end_campaign
from pbp.services.forum.gm import start_campaign as start_campaign
from pbp.services.forum.posts import Revision as Revision
from pbp.services.forum.posts import change_post as change_post
from pbp.services.forum.posts import create_post as create_post
from pbp.services.forum.posts import create_thread as create_thread
from pbp.services.forum.posts import delete_post as delete_post
from pbp.services.forum.posts import edit_post as edit_post
from pbp.services.forum.posts import post_history as post_history
from pbp.services.forum.posts import post_to_edit as post_to_edit
from pbp.services.forum.posts import remove_post as remove_post
from pbp.services.forum.posts import reply as reply
from pbp.services.forum.rolls import AFTER_THE_END as AFTER_THE_END
from pbp.services.forum.rolls import ANONYMOUS as ANONYMOUS
from pbp.services.forum.rolls import ROLL_VISIBILITY as ROLL_VISIBILITY
from pbp.services.forum.rolls import RollView as RollView
from pbp.services.forum.rolls import Viewer as Viewer
from pbp.services.forum.rolls import roll_view as roll_view
from pbp.services.forum.threads import Member as Member
from pbp.services.forum.threads import ThreadSummary as ThreadSummary
from pbp.services.forum.threads import get_thread as get_thread
from pbp.services.forum.threads import is_watching as is_watching
from pbp.services.forum.threads import list_threads as list_threads
from pbp.services.forum.threads import members as members
from pbp.services.forum.threads import postable_characters as postable_characters
from pbp.services.forum.threads import set_watch as set_watch
from pbp.services.forum.threads import watch_thread as watch_thread
from pbp.services.forum.visibility import FORUM_RULESETS as FORUM_RULESETS
from pbp.services.forum.visibility import PostView as PostView
from pbp.services.forum.visibility import can_see_post as can_see_post
from pbp.services.forum.visibility import get_post as get_post
from pbp.services.forum.visibility import get_roll_view as get_roll_view
from pbp.services.forum.visibility import is_revealed as is_revealed
from pbp.services.forum.visibility import require_forum as require_forum
from pbp.services.forum.visibility import viewer_for as viewer_for
from pbp.services.forum.visibility import visible_posts as visible_posts
