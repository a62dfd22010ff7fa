-- POST /api/auth/setup
select "id" from "users" where "is_owner" = ?;
begin;
select "id" from "users" where "is_owner" = ?;
insert into "users" ("email", "display_name", "password_hash", "is_owner", "created_at") values (?, ?, ?, ?, ?) returning *;
commit;
insert into "sessions" ("token_hash", "user_id", "created_at", "expires_at") values (?, ?, ?, ?);

-- POST /api/users
SELECT s.token_hash, s.expires_at, u.id, u.is_owner FROM sessions s
   JOIN users u ON u.id = s.user_id WHERE s.token_hash = ? AND s.expires_at > ?;
begin;
select * from "users" where lower("email") = ? and "email" <> ?;
insert into "users" ("email", "display_name", "password_hash", "is_owner", "created_at") values (?, ?, ?, ?, ?) returning *;
commit;

-- POST /api/auth/login
select * from "users" where lower("email") = ? and "email" <> ?;
insert into "sessions" ("token_hash", "user_id", "created_at", "expires_at") values (?, ?, ?, ?);

-- POST /api/notes
begin;
INSERT INTO notes (id, owner_id, title, content, color, pinned, archived, trashed, checklist_mode, sort_order, trashed_at, created_at, updated_at, version, field_clock, field_versions) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?);
INSERT INTO tags (name) SELECT value FROM json_each(?) WHERE true ON CONFLICT (name) DO NOTHING;
INSERT INTO note_tags (note_id, tag_id) SELECT ?, id FROM tags WHERE name IN (SELECT value FROM json_each(?));
INSERT INTO note_revisions (note_id, version, created_at, author_id, title, content) VALUES (?, ?, ?, ?, ?, ?);
INSERT OR REPLACE INTO notes_fts (rowid, title, content, tags) VALUES (?, ?, ?, ?);
commit;
SELECT * FROM reminders WHERE note_id = ? AND user_id = ? AND at IS NOT NULL;

-- GET /api/notes/{id}
SELECT n.*,
     EXISTS (SELECT 1 FROM note_collaborators c WHERE c.note_id = n.id AND c.user_id = @userId) AS is_collaborator
   FROM notes n WHERE n.id = @noteId;
SELECT t.name FROM note_tags nt JOIN tags t ON t.id = nt.tag_id WHERE nt.note_id = ? ORDER BY t.name;
SELECT * FROM attachments WHERE note_id = ? ORDER BY created_at, id;

-- PATCH /api/notes/{id}
begin;
SELECT n.*,
     EXISTS (SELECT 1 FROM note_collaborators c WHERE c.note_id = n.id AND c.user_id = @userId) AS is_collaborator
   FROM notes n WHERE n.id = @noteId;
UPDATE notes SET content = ?, version = ?, updated_at = ?, field_clock = ?, field_versions = ? WHERE id = ?;
select "t"."id", "t"."name" from "note_tags" as "nt" inner join "tags" as "t" on "t"."id" = "nt"."tag_id" where "nt"."note_id" = ?;
delete from "note_tags" where "note_id" = ? and "tag_id" in (SELECT value FROM json_each(?));
delete from "tags" where "id" in (SELECT value FROM json_each(?)) and not exists (select "tag_id" from "note_tags" where "tag_id" = "tags"."id");
INSERT INTO note_revisions (note_id, version, created_at, author_id, title, content) VALUES (?, ?, ?, ?, ?, ?);
INSERT OR REPLACE INTO notes_fts (rowid, title, content, tags) VALUES (?, ?, ?, ?);
commit;

-- PATCH /api/notes/{id} (title, the same hashtags)
begin;
SELECT n.*,
     EXISTS (SELECT 1 FROM note_collaborators c WHERE c.note_id = n.id AND c.user_id = @userId) AS is_collaborator
   FROM notes n WHERE n.id = @noteId;
UPDATE notes SET title = ?, version = ?, updated_at = ?, field_clock = ?, field_versions = ? WHERE id = ?;
INSERT INTO note_revisions (note_id, version, created_at, author_id, title, content) VALUES (?, ?, ?, ?, ?, ?);
INSERT OR REPLACE INTO notes_fts (rowid, title, content, tags) VALUES (?, ?, ?, ?);
commit;

-- GET /api/notes
SELECT total_changes() || ':' || data_version AS generation FROM pragma_data_version;
select "n"."id", "n"."doc_id", "n"."version", octet_length("n"."title") + octet_length("n"."content") as "bytes" from "notes" as "n" where (n.owner_id = ?
    OR n.id IN (SELECT note_id FROM note_collaborators WHERE user_id = ?)) and "n"."archived" = ? and "n"."trashed" = ? order by "n"."pinned" desc, "n"."sort_order" asc, "n"."updated_at" desc, "n"."id" asc;
SELECT count(*) AS rows, sum(revision) AS revisions FROM reminders WHERE user_id = ?;
select "n"."id", "n"."doc_id", "n"."owner_id", "n"."title", "n"."content", "n"."color", "n"."pinned", "n"."archived", "n"."trashed", "n"."trashed_at", "n"."checklist_mode", "n"."sort_order", "n"."created_at", "n"."updated_at", "n"."version" from "notes" as "n" where "n"."id" in (SELECT value FROM json_each(?)) and (n.owner_id = ?
    OR n.id IN (SELECT note_id FROM note_collaborators WHERE user_id = ?));
select "nt"."note_id", group_concat("t"."name", '' order by "t"."name") as "names" from "note_tags" as "nt" inner join "tags" as "t" on "t"."id" = "nt"."tag_id" where "nt"."note_id" in (SELECT value FROM json_each(?)) group by "nt"."note_id";
select * from "attachments" where "note_id" in (SELECT value FROM json_each(?)) order by "created_at", "id";

-- GET /api/search
SELECT total_changes() || ':' || data_version AS generation FROM pragma_data_version;

    SELECT term FROM temp.notes_fts_vocab
    WHERE term >= ? AND term < ?
    LIMIT ?;

    SELECT id, doc_id, version, bytes FROM (
      SELECT n.id, n.doc_id, n.version, n.updated_at, octet_length("n"."title") + octet_length("n"."content") AS bytes,
        bm25(notes_fts, 10.0, 1.0, 5.0) AS score
      FROM notes_fts
      CROSS JOIN notes n ON n.doc_id = notes_fts.rowid
      WHERE notes_fts MATCH ? AND n.trashed = 0 AND (n.owner_id = ?
    OR n.id IN (SELECT note_id FROM note_collaborators WHERE user_id = ?))
      ORDER BY notes_fts.rowid DESC
      LIMIT ?
    )
    ORDER BY score, updated_at DESC
    LIMIT ?;
SELECT count(*) AS rows, sum(revision) AS revisions FROM reminders WHERE user_id = ?;

-- GET /api/tags
select distinct "t"."name" from "notes" as "n" inner join "note_tags" as "nt" on "nt"."note_id" = "n"."id" inner join "tags" as "t" on "t"."id" = "nt"."tag_id" where "n"."trashed" = ? and (n.owner_id = ?
    OR n.id IN (SELECT note_id FROM note_collaborators WHERE user_id = ?)) order by "t"."name";

-- POST /api/notes/{id}/collaborators
begin;
SELECT n.*,
     EXISTS (SELECT 1 FROM note_collaborators c WHERE c.note_id = n.id AND c.user_id = @userId) AS is_collaborator
   FROM notes n WHERE n.id = @noteId;
select * from "users" where "id" = ?;
select "user_id" from "note_collaborators" where "note_id" = ? and "user_id" = ?;
insert into "note_collaborators" ("note_id", "user_id", "added_at") values (?, ?, ?);
delete from "note_tombstones" where "note_id" = ? and "user_id" = ?;
select "c"."user_id", "c"."added_at", "u"."display_name", "u"."email" from "note_collaborators" as "c" inner join "users" as "u" on "u"."id" = "c"."user_id" where "c"."note_id" = ? order by "c"."added_at", "c"."user_id";
commit;

-- GET /api/notes (as a collaborator)
SELECT s.token_hash, s.expires_at, u.id, u.is_owner FROM sessions s
   JOIN users u ON u.id = s.user_id WHERE s.token_hash = ? AND s.expires_at > ?;
SELECT total_changes() || ':' || data_version AS generation FROM pragma_data_version;
select "n"."id", "n"."doc_id", "n"."version", octet_length("n"."title") + octet_length("n"."content") as "bytes" from "notes" as "n" where (n.owner_id = ?
    OR n.id IN (SELECT note_id FROM note_collaborators WHERE user_id = ?)) and "n"."archived" = ? and "n"."trashed" = ? order by "n"."pinned" desc, "n"."sort_order" asc, "n"."updated_at" desc, "n"."id" asc;
SELECT count(*) AS rows, sum(revision) AS revisions FROM reminders WHERE user_id = ?;

-- POST /api/notes/{id}/attachments
SELECT n.*,
     EXISTS (SELECT 1 FROM note_collaborators c WHERE c.note_id = n.id AND c.user_id = @userId) AS is_collaborator
   FROM notes n WHERE n.id = @noteId;
begin;
SELECT n.*,
     EXISTS (SELECT 1 FROM note_collaborators c WHERE c.note_id = n.id AND c.user_id = @userId) AS is_collaborator
   FROM notes n WHERE n.id = @noteId;
insert into "attachments" ("id", "note_id", "filename", "mime_type", "size", "thumbnail_path", "created_at", "sha256", "thumbnail_size", "width", "height") values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) returning *;
UPDATE notes SET version = ?, updated_at = ? WHERE id = ?;
commit;

-- POST /api/notes/{id}/share
begin;
SELECT n.*,
     EXISTS (SELECT 1 FROM note_collaborators c WHERE c.note_id = n.id AND c.user_id = @userId) AS is_collaborator
   FROM notes n WHERE n.id = @noteId;
select * from "share_links" where "note_id" = ?;
insert into "share_links" ("note_id", "token", "created_at") values (?, ?, ?);
commit;

-- GET /api/shared/{token}
select "n".* from "share_links" as "s" inner join "notes" as "n" on "n"."id" = "s"."note_id" where "s"."token" = ?;
select * from "attachments" where "note_id" in (SELECT value FROM json_each(?)) order by "created_at", "id";

-- POST /api/sync
begin;
select "n".*, EXISTS (SELECT 1 FROM note_collaborators c WHERE c.note_id = n.id AND c.user_id = ?) as "is_collaborator" from "notes" as "n" where "n"."id" in (SELECT value FROM json_each(?));
select distinct "note_id" from "note_tombstones" where "note_id" in (SELECT value FROM json_each(?));
INSERT INTO notes (id, owner_id, title, content, color, pinned, archived, trashed, checklist_mode, sort_order, trashed_at, created_at, updated_at, version, field_clock, field_versions) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?);
INSERT INTO tags (name) SELECT value FROM json_each(?) WHERE true ON CONFLICT (name) DO NOTHING;
INSERT INTO note_tags (note_id, tag_id) SELECT ?, id FROM tags WHERE name IN (SELECT value FROM json_each(?));
INSERT INTO note_revisions (note_id, version, created_at, author_id, title, content) VALUES (?, ?, ?, ?, ?, ?);
INSERT OR REPLACE INTO notes_fts (rowid, title, content, tags) VALUES (?, ?, ?, ?);
commit;

-- GET /api/sync
select "n"."id", "n"."doc_id", "n"."version", "n"."updated_at", octet_length("n"."title") + octet_length("n"."content") as "bytes" from "notes" as "n" where n.owner_id = ? and "n"."updated_at" >= ? union all select "n"."id", "n"."doc_id", "n"."version", "n"."updated_at", octet_length("n"."title") + octet_length("n"."content") as "bytes" from "notes" as "n" where n.id IN (SELECT note_id FROM note_collaborators WHERE user_id = ?) and ("n"."updated_at" >= ? or exists (select "c"."note_id" from "note_collaborators" as "c" where "c"."note_id" = "n"."id" and "c"."user_id" = ? and "c"."added_at" >= ?)) order by "updated_at", "id";
select "note_id" from "reminders" where "user_id" = ? and "changed_at" >= ?;
SELECT count(*) AS rows, sum(revision) AS revisions FROM reminders WHERE user_id = ?;
select "n"."id", "n"."doc_id", "n"."owner_id", "n"."title", "n"."content", "n"."color", "n"."pinned", "n"."archived", "n"."trashed", "n"."trashed_at", "n"."checklist_mode", "n"."sort_order", "n"."created_at", "n"."updated_at", "n"."version" from "notes" as "n" where "n"."id" in (SELECT value FROM json_each(?)) and (n.owner_id = ?
    OR n.id IN (SELECT note_id FROM note_collaborators WHERE user_id = ?));
select "nt"."note_id", group_concat("t"."name", '' order by "t"."name") as "names" from "note_tags" as "nt" inner join "tags" as "t" on "t"."id" = "nt"."tag_id" where "nt"."note_id" in (SELECT value FROM json_each(?)) group by "nt"."note_id";
select * from "attachments" where "note_id" in (SELECT value FROM json_each(?)) order by "created_at", "id";

-- GET /api/sync/deleted
select "note_id", "deleted_at" from "note_tombstones" where "user_id" = ? and "deleted_at" >= ? order by "deleted_at", "note_id";

-- POST /api/settings/api-keys
insert into "api_keys" ("id", "user_id", "name", "key_hash", "key_prefix", "scopes", "created_at", "last_used_at") values (?, ?, ?, ?, ?, ?, ?, ?);

-- GET /api/notes (with an API key)
SELECT k.id, k.scopes, k.last_used_at, u.id AS user_id, u.is_owner FROM api_keys k
   JOIN users u ON u.id = k.user_id WHERE k.key_hash = ?;
update "api_keys" set "last_used_at" = ? where "id" = ?;
SELECT total_changes() || ':' || data_version AS generation FROM pragma_data_version;
select "n"."id", "n"."doc_id", "n"."version", octet_length("n"."title") + octet_length("n"."content") as "bytes" from "notes" as "n" where (n.owner_id = ?
    OR n.id IN (SELECT note_id FROM note_collaborators WHERE user_id = ?)) and "n"."archived" = ? and "n"."trashed" = ? order by "n"."pinned" desc, "n"."sort_order" asc, "n"."updated_at" desc, "n"."id" asc;
SELECT count(*) AS rows, sum(revision) AS revisions FROM reminders WHERE user_id = ?;

-- DELETE /api/notes/{id}
begin;
SELECT n.*,
     EXISTS (SELECT 1 FROM note_collaborators c WHERE c.note_id = n.id AND c.user_id = @userId) AS is_collaborator
   FROM notes n WHERE n.id = @noteId;
select "note_id" as "noteId", "user_id" as "userId" from "note_collaborators" where "note_id" in (SELECT value FROM json_each(?));
insert into "note_tombstones" ("note_id", "user_id", "deleted_at") values (?, ?, ?), (?, ?, ?) on conflict ("note_id", "user_id") do update set "deleted_at" = ?;
select * from "attachments" where "note_id" in (SELECT value FROM json_each(?));
select distinct "tag_id" from "note_tags" where "note_id" in (SELECT value FROM json_each(?));
delete from "notes" where "id" in (SELECT value FROM json_each(?));
delete from "tags" where "id" in (SELECT value FROM json_each(?)) and not exists (select "tag_id" from "note_tags" where "tag_id" = "tags"."id");
DELETE FROM notes_fts WHERE rowid IN (SELECT value FROM json_each(?));
commit;

-- DELETE /api/users/{id}
begin;
select * from "users" where "id" = ?;
select * from "notes" where "owner_id" = ?;
delete from "users" where "id" = ?;
commit;
